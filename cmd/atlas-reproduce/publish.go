package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/fetch"
	"github.com/atlas-reproduce/atlas-reproduce/internal/openreg"
	"github.com/atlas-reproduce/atlas-reproduce/publish"
	"github.com/atlas-reproduce/atlas-reproduce/publish/zenodo"
)

// repeatFlag is a repeatable flag whose values may hold commas.
type repeatFlag []string

func (r *repeatFlag) String() string     { return strings.Join(*r, "; ") }
func (r *repeatFlag) Set(v string) error { *r = append(*r, v); return nil }

// publishOptions is what publish's flags say.
type publishOptions struct {
	write   publish.Options // the deposit to write (Data, Run, Out, metadata)
	zenodo  string          // the instance to upload to; "" for none
	token   string          // its access token, read from the environment
	concept string          // make the record a new version of this concept
	draft   string          // resume this unpublished deposition
	publish bool            // publish the record, not leave a draft
	retries int             // retries of a request (0: none)
}

var runPublish = parsed(parsePublish, publishRun)

// parsePublish parses publish's command line; the token comes from the
// environment variable --token-env names, never from an argument.
func parsePublish(env *cmdEnv, args []string) (publishOptions, error) {
	fs := newFlagSet(env, "publish", synopsis("publish"))
	data := fs.String("data", "", "the release: a `PATH` to a folder of census files (or of zips holding them), or a zip (required)")
	run := fs.String("run", "", "the folder of a run over --data, whose report.json and classes.parquet are published (required)")
	out := fs.String("out", "", "write the deposit into `DIR`, which must not exist or be empty (required)")
	name := fs.String("name", publish.DefaultName, "stem of the zip's name, NAME-YYYYMMDD.zip")
	date := fs.String("date", "", "census date `YYYY-MM-DD`, for a run whose report.json names none (default: the run's release_date: a crawl's end, or run --release-date)")
	pubDate := fs.String("publication-date", "", "the record's publication date `YYYY-MM-DD` (default: today, UTC)")
	version := fs.String("version", "", "the record's version (default: the run's release_id, else the census date)")
	title := fs.String("title", "", "the record's title (default: one naming the census date)")
	var creators repeatFlag
	fs.Var(&creators, "creator", "an author, `\"Family, Given\"` or a team's name; repeatable (default: \""+publish.DefaultCreator+"\")")
	license := fs.String("license", publish.DefaultLicense, "Zenodo license `id`")
	prev := fs.String("previous-doi", "", "`DOI` of the release this one follows, cited as its previous version")
	zurl := fs.String("zenodo", "", "upload the deposit to the Zenodo instance at `URL` (https://zenodo.org, https://sandbox.zenodo.org)")
	tokenEnv := fs.String("token-env", "ZENODO_TOKEN", "environment variable `NAME` that holds the Zenodo access token (never given as an argument)")
	concept := fs.String("concept", "", "make the record a new version of this concept record `ID` (its latest version is looked up; the files the draft inherits are removed)")
	draft := fs.String("draft", "", "resume uploading into the unpublished deposition `ID` a failed upload left (files already there with the right MD5 are kept)")
	doPublish := fs.Bool("publish", false, "publish the record; without it the record is left a draft to review on Zenodo")
	retries := fs.Int("retries", zenodo.DefaultRetries, "retries of a Zenodo request after a connection error, 429 or 5xx (0: none)")
	if err := parseFlagsOnly(fs, args); err != nil {
		return publishOptions{}, err
	}
	switch {
	case *data == "" || *run == "" || *out == "":
		return publishOptions{}, usageError{"publish needs --data, --run and --out"}
	case *zurl == "" && (*concept != "" || *draft != "" || *doPublish):
		return publishOptions{}, usageError{"--concept, --draft and --publish need --zenodo"}
	case *concept != "" && *draft != "":
		return publishOptions{}, usageError{"--concept and --draft contradict each other: a resumed draft is already a version"}
	case *retries < 0:
		return publishOptions{}, usageError{"--retries must not be negative"}
	}
	if *concept != "" {
		id, err := fetch.ParseRecordID(*concept)
		if err != nil {
			return publishOptions{}, usageError{"--concept: " + err.Error()}
		}
		*concept = id
	}
	if *draft != "" && strings.Trim(*draft, "0123456789") != "" {
		return publishOptions{}, usageError{fmt.Sprintf("--draft %q is not a deposition id", *draft)}
	}
	var token string
	if *zurl != "" {
		token = os.Getenv(*tokenEnv)
		if token == "" {
			return publishOptions{}, usageError{fmt.Sprintf("--zenodo needs an access token in the environment variable %s (--token-env)", *tokenEnv)}
		}
	}
	return publishOptions{
		write: publish.Options{
			Data: *data, Run: *run, Out: *out, Name: *name, Date: *date, PublicationDate: *pubDate,
			Version: *version, Title: *title, Creators: creators, License: *license, PreviousDOI: *prev,
		},
		zenodo: *zurl, token: token, concept: *concept, draft: *draft, publish: *doPublish, retries: *retries,
	}, nil
}

// publishRun writes the deposit o names (or takes the one already in
// o.write.Out, when it is of this release and run) and uploads it when
// o.zenodo is set.
func publishRun(ctx context.Context, env *cmdEnv, o publishOptions) error {
	out := o.write.Out
	var files []string
	var verified map[string]string // the SHA-256 each file was verified against
	if dep, err := publish.Find(out); err != nil {
		return err
	} else if dep != nil && o.zenodo != "" {
		// A deposit written before (an upload that failed, say) is
		// uploaded as it is, once its files verify and it is the
		// deposit of the release and run named.
		if err := dep.Verify(); err != nil {
			return err
		}
		if err := dep.Belongs(o.write.Data, o.write.Run); err != nil {
			return err
		}
		if files, err = dep.UploadFiles(); err != nil {
			return err
		}
		verified = verifiedSums(dep)
		fmt.Fprintf(env.stdout, "deposit %s: already written, its files verified; uploading it as it is\n", out)
	} else {
		res, err := publish.Write(ctx, o.write)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "deposit %s: %s (%d bytes; census files %d bytes), census date %s\n", res.Dir, res.Zip, res.ZipBytes, res.CensusBytes, res.Date)
		files = res.Files
		if dep, err := publish.Find(out); err != nil {
			return err
		} else if dep != nil {
			verified = verifiedSums(dep)
		}
	}
	if o.zenodo == "" {
		return nil
	}
	meta, err := openreg.ReadFile(filepath.Join(out, publish.ZenodoFile), 1<<20)
	if err != nil {
		return err
	}
	c := &zenodo.Client{BaseURL: o.zenodo, Token: o.token, Logger: env.logger(slog.LevelInfo), UserAgent: fetch.DefaultUserAgent(), Retries: o.retries}
	if o.retries == 0 {
		c.Retries = -1
	}
	d, err := c.Deposit(ctx, zenodo.Upload{Dir: out, Files: files, Metadata: meta, Concept: o.concept, Draft: o.draft, Publish: o.publish, SHA256: verified})
	if err != nil {
		return err
	}
	state := "draft (review and publish it on Zenodo, or run again with --draft " + d.ID + " --publish)"
	if d.Published {
		state = "published"
	}
	fmt.Fprintf(env.stdout, "record %s, DOI %s: %s\n", d.ID, d.DOI, state)
	return nil
}

// verifiedSums is the SHA-256 of every file of dep as it was verified,
// its SHA256SUMS included: the upload holds each file's bytes to it.
func verifiedSums(dep *publish.Deposit) map[string]string {
	m := maps.Clone(map[string]string(dep.Sums))
	m[publish.SumsFile] = dep.SumsSHA256
	return m
}
