package outset

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// The test binary doubles as the writer that the tests kill: with
// OUTSET_CHILD set it runs child() instead of the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("OUTSET_CHILD"); mode != "" {
		os.Exit(child(mode, os.Getenv("OUTSET_DIR")))
	}
	os.Exit(m.Run())
}

// oldSet and newSet are the two complete sets a reader may see. newSet has a
// file the old one lacks, so a mix is visible by its presence too.
var (
	oldSet = map[string]string{"a.txt": "old a", "b.txt": "old b", "c.txt": "old c"}
	newSet = map[string]string{"a.txt": "new a", "b.txt": "new b", "c.txt": "new c", "d.txt": "new d"}
)

// child is the writer process. "commit:STEP" writes newSet and SIGKILLs
// itself when the commit reaches STEP; "hold" opens the folder, leaves a
// temporary, prints "ready" and waits for stdin to close.
func child(mode, dir string) int {
	s, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	switch {
	case strings.HasPrefix(mode, "commit:"):
		step := strings.TrimPrefix(mode, "commit:")
		testHook = func(got string) {
			if got == step {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
		if err := writeSet(s, newSet); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if err := s.Commit(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		return 0 // the step never came: the parent reports it
	case mode == "hold":
		if _, err := s.Create("unfinished.txt"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		fmt.Println("ready")
		bufio.NewReader(os.Stdin).ReadString('\n')
		s.Close()
		return 0
	}
	return 2
}

func writeSet(s *Set, files map[string]string) error {
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	})
	for _, n := range names {
		if err := s.WriteFile(n, []byte(files[n])); err != nil {
			return err
		}
	}
	return nil
}

func childCmd(t *testing.T, mode, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "OUTSET_CHILD="+mode, "OUTSET_DIR="+dir)
	cmd.Stderr = os.Stderr
	return cmd
}

// readDir returns the folder's files by name, control files included.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got[e.Name()] = string(data)
	}
	return got
}

func sameSet(got, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func commitSet(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := writeSet(s, files); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestKilledAtEveryStep kills a writer at each step of a commit and asserts
// that readers never take a mix for a set and that the next writer leaves the
// old set (killed before the journal) or the new one (killed after it).
func TestKilledAtEveryStep(t *testing.T) {
	steps := []struct {
		step        string
		journaled   bool // the journal was on disk when the writer died
		interrupted bool // Check must report the folder as half committed
	}{
		{"synced", false, false},
		{"journaled", true, true},
		{"renamed a.txt", true, true},
		{"renamed b.txt", true, true},
		{"renamed c.txt", true, true},
		{"renamed d.txt", true, true},
		{"dir synced", true, true},
		{"journal removed", true, false},
	}
	for _, tc := range steps {
		t.Run(tc.step, func(t *testing.T) {
			dir := t.TempDir()
			commitSet(t, dir, oldSet)

			cmd := childCmd(t, "commit:"+tc.step, dir)
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("writer was not killed at %q: %v", tc.step, err)
			}

			err = Check(dir)
			var ie *InterruptedError
			if tc.interrupted != errors.As(err, &ie) {
				t.Fatalf("Check after a kill at %q = %v, want interrupted %v", tc.step, err, tc.interrupted)
			}
			if err == nil {
				if got := finals(readDir(t, dir)); !sameSet(got, oldSet) && !sameSet(got, newSet) {
					t.Fatalf("Check passed a mixed folder: %v", got)
				}
			} else if !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q does not name the folder", err)
			}

			s, err := Open(dir)
			if err != nil {
				t.Fatalf("Open after a kill at %q: %v", tc.step, err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := Check(dir); err != nil {
				t.Fatalf("Check after repair: %v", err)
			}
			want := oldSet
			if tc.journaled {
				want = newSet
			}
			if got := readDir(t, dir); !sameSet(got, want) {
				t.Fatalf("after repair the folder holds %v, want %v (and no control file)", got, want)
			}
		})
	}
}

// finals drops the package's control files and temporaries from a listing.
func finals(files map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range files {
		if !strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out
}

// TestSecondWriter holds a folder in another process and asserts that a
// second writer is refused at once with the holder's pid, and that once the
// holder is killed the next writer gets in and removes its temporary.
func TestSecondWriter(t *testing.T) {
	dir := t.TempDir()
	cmd := childCmd(t, "hold", dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("holder did not get ready: %q %v", line, err)
	}

	_, err = Open(dir)
	var le *LockedError
	if !errors.As(err, &le) {
		t.Fatalf("second Open = %v, want *LockedError", err)
	}
	if le.PID != cmd.Process.Pid {
		t.Errorf("LockedError names pid %d, holder is %d", le.PID, cmd.Process.Pid)
	}
	if want := fmt.Sprintf("pid %d", cmd.Process.Pid); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if host, _ := os.Hostname(); le.Host != host || le.Since == "" {
		t.Errorf("LockedError host %q since %q", le.Host, le.Since)
	}

	cmd.Process.Kill()
	cmd.Wait()
	if n := len(finals(readDir(t, dir))); n != len(readDir(t, dir))-2 {
		t.Fatalf("the killed writer should have left its lock and temporary: %v", readDir(t, dir))
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatalf("Open after the holder died: %v", err)
	}
	if got := readDir(t, dir); len(got) != 1 || got[lockName] == "" {
		t.Errorf("Open left %v; want only its own lock file", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readDir(t, dir); len(got) != 0 {
		t.Errorf("Close left %v", got)
	}
}

func TestSecondWriterInProcess(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir)
	var le *LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Fatalf("second Open = %v, want *LockedError naming pid %d", err, os.Getpid())
	}
	s.Close()
	s2, err := Open(dir)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s2.Close()
}

func TestCloseWithoutCommit(t *testing.T) {
	dir := t.TempDir()
	commitSet(t, dir, oldSet)
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeSet(s, newSet); err != nil {
		t.Fatal(err)
	}
	f, err := s.Create("open.txt")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("never committed")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readDir(t, dir); !sameSet(got, oldSet) {
		t.Fatalf("an abandoned set changed the folder: %v", got)
	}
}

func TestCreateRefusesNames(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, name := range []string{"", ".", "..", "a/b", ".outset-lock", "x\x1b]0;t\x07", "dup"} {
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
			if name == "dup" {
				if _, err := s.Create(name); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Create(name); err == nil {
				t.Fatalf("Create(%q) succeeded", name)
			}
		})
	}
}

// TestPermissions pins the one rule: 0666 and 0777 less the umask.
func TestPermissions(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "out")
	commitSet(t, dir, map[string]string{"f": "x"})
	if err := WriteFile(filepath.Join(dir, "g"), []byte("y"), 0o666); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{dir: os.ModeDir | 0o750, filepath.Join(dir, "f"): 0o640, filepath.Join(dir, "g"): 0o640} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode(), want)
		}
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "one.json")
	for _, data := range []string{"first", "second"} {
		if err := WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := readDir(t, dir); len(got) != 1 || got["one.json"] != data {
			t.Fatalf("folder holds %v, want only one.json = %q", got, data)
		}
	}
}

// TestCommitClosedFile: a caller may close what Create gave it.
func TestCommitClosedFile(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f, err := s.Create("x")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("data")
	f.Close()
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "x")); string(got) != "data" {
		t.Fatalf("x = %q", got)
	}
}

func TestCheckMissingFolder(t *testing.T) {
	if err := Check(filepath.Join(t.TempDir(), "none")); err != nil {
		t.Fatal(err)
	}
}

// TestRenameFailsHalfway: a commit whose third rename fails leaves the folder
// marked interrupted, not passed off as a set, and the next writer completes
// it once the obstacle is gone.
func TestRenameFailsHalfway(t *testing.T) {
	dir := t.TempDir()
	commitSet(t, dir, oldSet)
	// A folder where c.txt should go makes its rename fail.
	if err := os.Remove(filepath.Join(dir, "c.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "c.txt", "blocker"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeSet(s, newSet); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(); err == nil {
		t.Fatal("Commit succeeded over a folder")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var ie *InterruptedError
	if err := Check(dir); !errors.As(err, &ie) {
		t.Fatalf("Check after a failed commit = %v, want *InterruptedError", err)
	}
	if _, err := Open(dir); err == nil {
		t.Fatal("Open completed a commit whose rename still fails")
	}
	if err := os.RemoveAll(filepath.Join(dir, "c.txt")); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir)
	if err != nil {
		t.Fatalf("Open once the obstacle is gone: %v", err)
	}
	s.Close()
	if got := readDir(t, dir); !sameSet(got, newSet) {
		t.Fatalf("after repair the folder holds %v, want %v", got, newSet)
	}
}

// TestAdopt: an adopted file joins the set on Commit and survives a Close
// without one, as a resumable download must.
func TestAdopt(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.zip.part"), []byte("bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Adopt("big.zip.part", "big.zip"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got := readDir(t, dir); got["big.zip.part"] != "bytes" || len(got) != 1 {
		t.Fatalf("Close without Commit left %v, want the adopted file kept", got)
	}
	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Adopt("big.zip.part", "big.zip"); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile("SUMS", []byte("sums")); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := finals(readDir(t, dir)); !sameSet(got, map[string]string{"big.zip": "bytes", "SUMS": "sums"}) {
		t.Fatalf("after Commit: %v", got)
	}
}

// TestUncommittedLeavesNoFolder: a set closed without a commit removes the
// folder Open made for it (a failed command leaves no empty output folder),
// and keeps one that was there before or that a commit filled.
func TestUncommittedLeavesNoFolder(t *testing.T) {
	for _, tc := range []struct {
		name            string
		existed, commit bool
		wantFolder      bool
	}{
		{"made by Open, not committed", false, false, false},
		{"made by Open, committed", false, true, true},
		{"there before, not committed", true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			if tc.existed {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.WriteFile("a.txt", []byte("a")); err != nil {
				t.Fatal(err)
			}
			if tc.commit {
				if err := s.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			_, err = os.Stat(dir)
			if got := err == nil; got != tc.wantFolder {
				t.Errorf("folder there after Close: %v, want %v (stat: %v)", got, tc.wantFolder, err)
			}
		})
	}
}
