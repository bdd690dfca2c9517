package export

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/llmbench/llmbench/internal/errline"
	"github.com/llmbench/llmbench/rawlog"
)

// CollectOptions are one `analyze collect`: a finished run folder handed out as a tar.
type CollectOptions struct {
	// Dir is the run folder: a run, or the shards of one and their merged analysis.
	Dir string
	// Partial collects even if a run.json says the run is still running.
	Partial bool
	// Serve, when not "", is the address to serve the tar on over HTTP (GET /) instead of
	// writing it to Stdout, for ServeFor (positive) or until SIGTERM or SIGINT.
	Serve    string
	ServeFor time.Duration
	// Stdout takes the tar (refused when it is a terminal); Stderr what was written or
	// served and the failures, one line each.
	Stdout *os.File
	Stderr io.Writer
}

// Collect writes o.Dir's folders and regular files as a tar to o.Stdout, or serves it
// (o.Serve), so that a FROM-scratch image, which has no tar for `kubectl cp`, can hand
// results out of a volume. A folder holding no run.json, or one saying its run is still
// running (unless o.Partial), is refused. It returns 0, 1 when writing or
// serving failed, or ExitBadInput (2) on bad input (one line "analyze collect: ..." on stderr).
func Collect(o CollectOptions) int {
	stdout, stderr := o.Stdout, o.Stderr
	bad := func(err error) int {
		fmt.Fprintln(stderr, errline.Format("analyze collect", err))
		return ExitBadInput
	}
	dir := filepath.Clean(o.Dir)
	if err := checkCollectable(dir, o.Partial); err != nil {
		return bad(err)
	}
	if o.Serve == "" {
		if st, err := stdout.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return bad(errors.New("stdout is a terminal: redirect it to a file (analyze collect DIR > DIR.tar)"))
		}
		n, size, err := writeRunTar(stdout, dir)
		if err != nil {
			fmt.Fprintln(stderr, errline.Format("analyze collect", err))
			return 1
		}
		fmt.Fprintf(stderr, "analyze collect: %s: %d files, %d bytes\n", dir, n, size)
		return 0
	}
	if o.ServeFor <= 0 {
		return bad(fmt.Errorf("--serve-for %v: must be positive", o.ServeFor))
	}
	return serveRunTar(o.Serve, dir, o.ServeFor, stderr)
}

// checkCollectable refuses a folder that is not one or holds no finished run.
func checkCollectable(dir string, partial bool) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	runs := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != rawlog.ManifestName {
			return err
		}
		runs++
		m, err := rawlog.ReadManifest(filepath.Dir(p))
		if err != nil {
			return nil // collected as it is: the analysis of the copy reports it
		}
		if m.Status == rawlog.StatusRunning && !partial {
			return fmt.Errorf("%s says the run is still running: wait until it ends (or --partial)", p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if runs == 0 {
		return fmt.Errorf("%s holds no run (no %s in it or below)", dir, rawlog.ManifestName)
	}
	return nil
}

// writeRunTar writes dir's folders and regular files as a tar whose top folder is dir's
// base name; it returns the files and bytes written.
func writeRunTar(w io.Writer, dir string) (files int, size int64, err error) {
	tw := tar.NewWriter(w)
	base := filepath.Base(dir)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !d.IsDir() && !info.Mode().IsRegular() {
			return nil // links, sockets: not part of a run
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(filepath.Join(base, rel))
		if d.IsDir() {
			h.Name += "/"
		}
		h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "", ""
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		n, err := io.CopyN(tw, f, info.Size())
		size += n
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		files++
		return nil
	})
	if err == nil {
		err = tw.Close()
	}
	return files, size, err
}

// serveRunTar serves the tar at GET / on addr for d, or until SIGTERM or SIGINT.
func serveRunTar(addr, dir string, d time.Duration, stderr io.Writer) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(stderr, errline.Format("analyze collect", fmt.Errorf("--serve %s: %w", addr, err)))
		return 2
	}
	name := filepath.Base(dir) + ".tar"
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || (r.URL.Path != "/" && r.URL.Path != "/"+name) {
			http.Error(w, "GET / or /"+name, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/x-tar")
		w.Header().Set("Content-Disposition", `attachment; filename="`+strings.ReplaceAll(name, `"`, "")+`"`)
		n, size, err := writeRunTar(w, dir)
		if err != nil {
			fmt.Fprintf(stderr, "analyze collect: to %s: %v\n", r.RemoteAddr, err)
			return
		}
		fmt.Fprintf(stderr, "analyze collect: sent %s to %s: %d files, %d bytes\n", dir, r.RemoteAddr, n, size)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "analyze collect: serving %s as %s on http://%s/ for %v\n", dir, name, ln.Addr(), d)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, errline.Format("analyze collect", err))
		return 1
	}
	return 0
}
