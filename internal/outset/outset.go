// Package outset writes a folder's files as one set: every file of a run or a
// release appears under its final name together with the others, or none
// does, whatever instant the writer is killed at.
//
// A writer Opens the folder (taking its lock), Creates each file under a
// temporary name, and Commits: every file is fsync'd, a commit journal naming
// them is written and fsync'd, the files are renamed into place, the folder is
// fsync'd and the journal removed. A crash before the journal exists leaves the
// previous set untouched (the temporaries are removed by the next Open); a
// crash after it leaves a journal that every reader sees through Check and
// that the next Open completes (rolls forward), so no one ever takes a half
// renamed folder for a complete one.
//
// Permissions follow one rule, the one os.Create and os.MkdirAll follow:
// files are created 0666 and folders 0777, less the process umask. The user's
// umask decides who may read the outputs; no writer chmods behind its back.
//
// The control files live in the folder beside the set and start with
// ".outset-": the lock (present only while a writer holds it), the commit
// journal (present only between the first and the last rename of a commit) and
// the temporaries.
package outset

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/atlas-reproduce/atlas-reproduce/internal/openreg"
)

const (
	prefix      = ".outset-"
	tempPrefix  = prefix + "tmp-"
	journalName = prefix + "commit"
	lockName    = prefix + "lock"

	filePerm = 0o666
	dirPerm  = 0o777
)

// testHook, when set by a test, is called between the steps of a commit with
// the name of the step just finished, so a test can kill the process there.
var testHook func(step string)

func hook(step string) {
	if testHook != nil {
		testHook(step)
	}
}

// LockedError is returned by Open when another process is writing the folder.
type LockedError struct {
	Dir string
	// PID, Host and Since describe the holder as its lock file says; PID
	// is 0 when the holder had not yet written it.
	PID   int
	Host  string
	Since string
}

func (e *LockedError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("output folder %q is being written by another process", e.Dir)
	}
	msg := fmt.Sprintf("output folder %q is being written by another process (pid %d", e.Dir, e.PID)
	if e.Host != "" {
		msg += " on " + e.Host
	}
	if e.Since != "" {
		msg += ", since " + e.Since
	}
	return msg + ")"
}

// InterruptedError is returned by Check (and by readers that call it) when a
// commit journal is pending: the folder holds part of a new set beside part
// of the previous one.
type InterruptedError struct {
	Dir string
}

// ErrInterrupted is what every InterruptedError is (errors.Is), for
// packages that let callers outside the module test for it.
var ErrInterrupted = errors.New("half-committed set of files")

// Is makes errors.Is(err, ErrInterrupted) true.
func (e *InterruptedError) Is(target error) bool { return target == ErrInterrupted }

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("output folder %q holds a half-committed set of files "+
		"(a writer was stopped while renaming them, or is renaming them now); "+
		"run the command that writes it again to complete it", e.Dir)
}

// Set is one writer's pending set of files in a folder.
type Set struct {
	dir       string
	lock      *lockFile
	files     []*pending
	journaled bool // a journal of this set's commit is on disk
	closed    bool
	// created: Open made the folder; committed: a Commit succeeded. A
	// set closed uncommitted in a folder it made removes the folder, so
	// that a command that failed leaves no empty output folder behind.
	created, committed bool
}

type pending struct {
	name    string // final base name
	temp    string // temporary base name
	f       *os.File
	adopted bool // the caller's file: synced and renamed, never removed
}

// Open makes dir if needed and takes its writer lock (a lock file holding
// pid, host and start time, flock-based so a dead holder never blocks); a
// second writer gets *LockedError at once, naming the holder's pid. Open also
// repairs an interrupted commit (rolls it forward) and removes temp files left
// by killed writers.
func Open(dir string) (*Set, error) {
	_, statErr := os.Lstat(dir)
	created := errors.Is(statErr, fs.ErrNotExist)
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	lk, err := acquire(dir)
	if err != nil {
		if created {
			os.Remove(dir)
		}
		return nil, err
	}
	if err := recoverDir(dir); err != nil {
		lk.release()
		return nil, err
	}
	return &Set{dir: dir, lock: lk, created: created}, nil
}

// Dir is the folder the set is written to.
func (s *Set) Dir() string { return s.dir }

// Create returns a new temporary file in the folder that becomes dir/name on
// Commit. The caller writes it and may close it; Commit syncs it either way.
func (s *Set) Create(name string) (*os.File, error) {
	if s.closed {
		return nil, errors.New("outset: Create on a closed set")
	}
	if err := validName(name); err != nil {
		return nil, err
	}
	for _, p := range s.files {
		if p.name == name {
			return nil, fmt.Errorf("outset: %q created twice in one set", name)
		}
	}
	f, temp, err := createTemp(s.dir, name)
	if err != nil {
		return nil, fmt.Errorf("output folder %s is not writable: %w", s.dir, err)
	}
	s.files = append(s.files, &pending{name: name, temp: temp, f: f})
	return f, nil
}

// Adopt makes temp, a complete file the caller wrote in the folder under a
// plain name of its own (a resumable download's NAME.part, say), part of the
// set: Commit syncs it and renames it to name with the others. Close never
// removes an adopted file, so a caller's resumable state survives a failed
// set.
func (s *Set) Adopt(temp, name string) error {
	if s.closed {
		return errors.New("outset: Adopt on a closed set")
	}
	if err := validName(name); err != nil {
		return err
	}
	if err := validName(temp); err != nil {
		return err
	}
	for _, p := range s.files {
		if p.name == name || p.temp == temp {
			return fmt.Errorf("outset: %q added twice to one set", name)
		}
	}
	f, err := os.Open(filepath.Join(s.dir, temp))
	if err != nil {
		return err
	}
	s.files = append(s.files, &pending{name: name, temp: temp, f: f, adopted: true})
	return nil
}

// WriteFile adds a file holding data to the set.
func (s *Set) WriteFile(name string, data []byte) error {
	f, err := s.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(s.dir, name), err)
	}
	return f.Close()
}

// Commit puts every file created since Open (or the last Commit) in place as
// one set: fsync each file; write and fsync a commit journal listing them;
// rename all; fsync the folder; remove the journal; fsync the folder. An error
// after the journal was written leaves the journal and the temporaries for the
// next Open to complete, and readers see the folder as interrupted meanwhile.
func (s *Set) Commit() error {
	if s.closed {
		return errors.New("outset: Commit on a closed set")
	}
	if len(s.files) == 0 {
		s.committed = true
		return nil
	}
	for _, p := range s.files {
		if err := syncClose(p.f); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(s.dir, p.name), err)
		}
	}
	hook("synced")
	if err := writeJournal(s.dir, s.files); err != nil {
		return err
	}
	s.journaled = true
	hook("journaled")
	for _, p := range s.files {
		if err := os.Rename(filepath.Join(s.dir, p.temp), filepath.Join(s.dir, p.name)); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(s.dir, p.name), err)
		}
		hook("renamed " + p.name)
	}
	if err := finishJournal(s.dir); err != nil {
		return err
	}
	s.files, s.journaled, s.committed = nil, false, true
	return nil
}

// Close removes the temporaries of an uncommitted set and releases the lock;
// it is safe after Commit and safe to call twice. After a Commit that failed
// halfway it keeps the temporaries and the journal, which the next Open uses
// to complete the set.
func (s *Set) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var first error
	for _, p := range s.files {
		p.f.Close()
		if s.journaled || p.adopted {
			continue
		}
		if err := os.Remove(filepath.Join(s.dir, p.temp)); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = err
		}
	}
	s.files = nil
	if err := s.lock.release(); err != nil && first == nil {
		first = err
	}
	if s.created && !s.committed && !s.journaled {
		// Only an empty folder goes: Remove fails on one that holds
		// anything (another writer's files, adopted ones).
		os.Remove(s.dir)
	}
	return first
}

// Check is for readers: it returns *InterruptedError when a commit journal is
// pending in dir (a set half renamed), nil when the folder holds a complete set
// or does not exist.
func Check(dir string) error {
	_, err := os.Lstat(filepath.Join(dir, journalName))
	switch {
	case err == nil:
		return &InterruptedError{Dir: dir}
	case errors.Is(err, fs.ErrNotExist):
		return nil
	default:
		return fmt.Errorf("output folder %q: %w", dir, err)
	}
}

// OpenFile opens path for reading once its folder has passed Check: a
// folder left between two sets may hold files of either, and a reader must
// not take one of them for a set's file. A folder error is prefixed with path.
func OpenFile(path string) (*os.File, error) {
	if err := checkFolderOf(path); err != nil {
		return nil, err
	}
	// A FIFO in a set's place would block open(2) for good.
	return openreg.Open(path)
}

// ReadFile is OpenFile reading the whole file, as os.ReadFile does.
func ReadFile(path string) ([]byte, error) {
	f, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func checkFolderOf(path string) error {
	if err := Check(filepath.Dir(path)); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// WriteFile writes one file atomically: a temporary beside path, fsync,
// rename, fsync of the folder. perm is subject to the umask, as in
// os.WriteFile. It takes no lock.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, temp, err := createTempPerm(dir, name, perm)
	if err != nil {
		return err
	}
	tempPath := filepath.Join(dir, temp)
	_, err = f.Write(data)
	if err == nil {
		err = syncClose(f)
	} else {
		f.Close()
	}
	if err == nil {
		err = os.Rename(tempPath, path)
	}
	if err != nil {
		os.Remove(tempPath)
		return fmt.Errorf("%s: %w", path, err)
	}
	return syncDir(dir)
}

// validName accepts a plain base name, not one of the package's own.
func validName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') ||
		strings.ContainsRune(name, filepath.Separator) || strings.HasPrefix(name, prefix) {
		return fmt.Errorf("outset: %q is not a plain file name", name)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("outset: file name %q holds a control character", name)
		}
	}
	return nil
}

func createTemp(dir, name string) (*os.File, string, error) {
	return createTempPerm(dir, name, filePerm)
}

// createTempPerm makes a new file named for name with a random part, so that
// Open can tell the temporaries of the package from any other file.
func createTempPerm(dir, name string, perm os.FileMode) (*os.File, string, error) {
	for range 10000 {
		var b [6]byte
		rand.Read(b[:])
		temp := tempPrefix + hex.EncodeToString(b[:]) + "-" + name
		f, err := os.OpenFile(filepath.Join(dir, temp), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, temp, err
	}
	return nil, "", fmt.Errorf("outset: no free temporary name in %s", dir)
}

// syncClose flushes f to disk and closes it; a file the caller already closed
// is reopened for the fsync, which covers the data written through any
// descriptor.
func syncClose(f *os.File) error {
	err := f.Sync()
	if errors.Is(err, os.ErrClosed) {
		g, oerr := os.Open(f.Name())
		if oerr != nil {
			return oerr
		}
		err = g.Sync()
		g.Close()
		return err
	}
	if err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("output folder %s: fsync: %w", dir, err)
	}
	return nil
}

// journal is the on-disk record of a commit in progress.
type journal struct {
	Files []journalEntry `json:"files"`
}

type journalEntry struct {
	Temp string `json:"temp"`
	Name string `json:"name"`
}

// writeJournal puts the journal in place atomically: it exists complete or
// not at all, so its presence alone means "roll forward".
func writeJournal(dir string, files []*pending) error {
	var j journal
	for _, p := range files {
		j.Files = append(j.Files, journalEntry{Temp: p.temp, Name: p.name})
	}
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if err := WriteFile(filepath.Join(dir, journalName), data, filePerm); err != nil {
		return fmt.Errorf("output folder %s: commit journal: %w", dir, err)
	}
	return nil
}

// finishJournal makes the renames durable, then drops the journal.
func finishJournal(dir string) error {
	if err := syncDir(dir); err != nil {
		return err
	}
	hook("dir synced")
	if err := os.Remove(filepath.Join(dir, journalName)); err != nil {
		return fmt.Errorf("output folder %s: commit journal: %w", dir, err)
	}
	hook("journal removed")
	return syncDir(dir)
}

// recoverDir completes a commit whose journal is pending, then removes the
// temporaries that no journal names: they belong to writers that died before
// committing. The caller holds the lock, so no live writer owns them.
func recoverDir(dir string) error {
	if err := rollForward(dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("output folder %s: removing a stale temporary: %w", dir, err)
			}
		}
	}
	return nil
}

func rollForward(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, journalName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output folder %s: commit journal: %w", dir, err)
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("output folder %s: commit journal %s is damaged: %w", dir, journalName, err)
	}
	for _, e := range j.Files {
		badTemp := strings.ContainsAny(e.Temp, "/"+string(filepath.Separator)) ||
			(validName(e.Temp) != nil && !strings.HasPrefix(e.Temp, tempPrefix))
		if validName(e.Name) != nil || badTemp {
			return fmt.Errorf("output folder %s: commit journal names %q, not a file of a set", dir, e.Name)
		}
		err := os.Rename(filepath.Join(dir, e.Temp), filepath.Join(dir, e.Name))
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			if err != nil {
				return fmt.Errorf("output folder %s: completing an interrupted commit: %w", dir, err)
			}
			continue
		}
		// The temporary is gone: renamed before the crash, unless the final
		// file is gone too, and then the set cannot be completed.
		if _, err := os.Lstat(filepath.Join(dir, e.Name)); err != nil {
			return fmt.Errorf("output folder %s: an interrupted commit lost %q; "+
				"remove the folder's files and write it again", dir, e.Name)
		}
	}
	return finishJournal(dir)
}
