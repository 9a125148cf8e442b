package document

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/klippa-app/go-pdfium"
	pdferrors "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// pdfMemoryPages bounds the PDF engine's memory: 64 KiB WebAssembly
// pages, 768 MiB in all (a 100 MB PDF and its parsed objects fit).
const pdfMemoryPages = 768 << 20 >> 16

// pdfEngine is PDFium compiled to WebAssembly, run by wazero: no C
// compiler, no native library, and the engine runs in its own memory that
// a hostile PDF cannot leave. Compiling the module takes seconds, so it is
// started on the first PDF and kept warm (one instance, reused); the
// compiled code is cached on disk under CacheDir so a restart skips most
// of it. A read that outlives its context kills its instance (the next
// read gets a new one from the compiled module, which is cheap).
type pdfEngine struct {
	mu   sync.Mutex
	pool pdfium.Pool
	err  error
}

func (e *pdfEngine) start(cacheDir string) (pdfium.Pool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pool != nil {
		return e.pool, nil
	}
	rc := wazero.NewRuntimeConfig().
		WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
		WithMemoryLimitPages(pdfMemoryPages).
		WithCloseOnContextDone(true)
	if cacheDir != "" {
		if err := os.MkdirAll(cacheDir, 0o700); err == nil {
			if cache, err := wazero.NewCompilationCacheWithDir(cacheDir); err == nil {
				rc = rc.WithCompilationCache(cache)
			}
		}
	}
	pool, err := webassembly.Init(webassembly.Config{
		MinIdle: 1, MaxIdle: 1, MaxTotal: 1, ReuseWorkers: true,
		RuntimeConfig: rc,
		// No folder is mounted: the engine sees only the bytes it is given.
		FSConfig: wazero.NewFSConfig(),
		Stdout:   io.Discard, Stderr: io.Discard,
	})
	if err != nil {
		return nil, fmt.Errorf("start the PDF engine: %w", err)
	}
	e.pool = pool
	return pool, nil
}

func (e *pdfEngine) close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pool == nil {
		return nil
	}
	err := e.pool.Close()
	e.pool = nil
	return err
}

// Warm starts the PDF engine now (Hearth does it on the first PDF).
func (r *Reader) Warm() error {
	_, err := r.pdf.start(r.CacheDir)
	return err
}

func (r *Reader) pdfPool() (pdfium.Pool, error) { return r.pdf.start(r.CacheDir) }

// readPDF gives the text of the pages opt.Pages selects (all, by
// default), each under a "--- page N ---" line, stopping after MaxPages
// pages or once the text is longer than opt.Need.
func (r *Reader) readPDF(ctx context.Context, data []byte, opt Options) (res *Result, err error) {
	pool, err := r.pdfPool()
	if err != nil {
		return nil, err
	}
	inst, err := pool.GetInstanceWithContext(ctx)
	if err != nil {
		return nil, err
	}
	// A read past its time kills the instance: wazero stops the running
	// WebAssembly when its context ends (WithCloseOnContextDone).
	stop := context.AfterFunc(ctx, func() { inst.Kill() })
	defer func() {
		if stop() {
			inst.Close()
		} else if err == nil {
			err = ctx.Err()
		} else if ctx.Err() != nil {
			err = ctx.Err()
		}
	}()
	doc, err := inst.OpenDocument(&requests.OpenDocument{File: &data})
	if err != nil {
		if errors.Is(err, pdferrors.ErrPassword) || errors.Is(err, pdferrors.ErrSecurity) {
			return nil, &Error{Code: CodeEncrypted, Message: "the PDF is protected by a password, which Hearth cannot open; open it, and print or save it as a PDF without a password", Err: err}
		}
		return nil, err
	}
	defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: doc.Document})
	count, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: doc.Document})
	if err != nil {
		return nil, err
	}
	first, last, err := parsePages(opt.Pages, count.PageCount)
	if err != nil {
		return nil, err
	}
	res = &Result{Pages: count.PageCount, Complete: true}
	buf := textBuf{limit: opt.need()}
	n := first
	for ; n <= last; n++ {
		if n-first >= MaxPages || buf.full() {
			res.Complete = false
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pt, err := inst.GetPageText(&requests.GetPageText{Page: requests.Page{ByIndex: &requests.PageByIndex{Document: doc.Document, Index: n - 1}}})
		if err != nil {
			return nil, err
		}
		text := strings.TrimSpace(strings.ReplaceAll(pt.Text, "\r\n", "\n"))
		if buf.Len() > 0 {
			buf.WriteString("\n\n")
		}
		fmt.Fprintf(&buf, "--- page %d ---\n", n)
		if text == "" {
			res.NoText = append(res.NoText, n)
			buf.WriteString("(no text on this page: it may be a scanned picture, which Hearth does not read)")
			continue
		}
		buf.WriteString(text)
	}
	if first <= last {
		res.PagesRead = pageRange(first, n-1)
	}
	if !res.Complete {
		res.More = fmt.Sprintf("read on with pages %s", pageRange(n, last))
	}
	res.Text = buf.String() + "\n"
	return res, nil
}

func pageRange(a, b int) string {
	if a == b {
		return strconv.Itoa(a)
	}
	return fmt.Sprintf("%d-%d", a, b)
}

// parsePages reads "3", "2-5", "10-" or "" (all) against count pages.
func parsePages(s string, count int) (first, last int, err error) {
	if s == "" {
		return 1, count, nil
	}
	bad := &FieldError{Field: "pages", Message: fmt.Sprintf("%q is not a page range (like 3, 2-5 or 10-); the document has %d pages", s, count)}
	a, b, two := strings.Cut(strings.ReplaceAll(s, " ", ""), "-")
	first, err = strconv.Atoi(a)
	if err != nil || first < 1 {
		return 0, 0, bad
	}
	last = first
	if two {
		if b == "" {
			last = count
		} else if last, err = strconv.Atoi(b); err != nil || last < first {
			return 0, 0, bad
		}
	}
	if first > count {
		return 0, 0, &FieldError{Field: "pages", Message: fmt.Sprintf("the document has %d pages, so there is no page %d", count, first)}
	}
	return first, min(last, count), nil
}
