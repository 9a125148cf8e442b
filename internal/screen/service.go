package screen

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// Bounds of a Service's calls (the zero fields of a Service take the
// defaults).
const (
	DefaultDeadline = 15 * time.Second
	// DefaultMaxWidth and DefaultMaxBytes bound an image when the call
	// does not; MaxWidthCeiling and MaxBytesCeiling bound what a call may
	// ask for.
	DefaultMaxWidth = 1600
	MaxWidthCeiling = 7680
	DefaultMaxBytes = 512 << 10
	MaxBytesCeiling = 4 << 20
	MinMaxBytes     = 1 << 10
	DefaultQuality  = 80
	// MaxCapture bounds a capture's side in screen pixels before scaling.
	MaxCapture = 16384
	// MaxClipboardBytes bounds clipboard text, read or set, in bytes of
	// UTF-8.
	MaxClipboardBytes = 1 << 20
)

// Service runs ui.screenshot and the clipboard primitives. One capture or
// clipboard call runs at a time; each is bounded by Deadline.
type Service struct {
	// OpenDisplay opens the host's screen for one call (nil: the
	// platform's, DefaultDisplay).
	OpenDisplay func() (Display, error)
	// Clipboard is the host's clipboard (nil: DefaultClipboard).
	Clipboard Clipboard
	Log       *slog.Logger
	// IsPanel reports whether a window title shows Hearth's control panel
	// (uia.Service.ShowsPanel); such a window is treated as Hearth's own.
	IsPanel func(title string) bool
	// Self is Hearth's process id (0: this process's).
	Self     int
	Deadline time.Duration

	once sync.Once
	slot chan struct{}
}

func (s *Service) init() {
	s.once.Do(func() {
		if s.OpenDisplay == nil {
			s.OpenDisplay = DefaultDisplay
		}
		if s.Clipboard == nil {
			s.Clipboard = DefaultClipboard(s.Log)
		}
		if s.Log == nil {
			s.Log = slog.New(slog.DiscardHandler)
		}
		if s.IsPanel == nil {
			s.IsPanel = func(string) bool { return false }
		}
		if s.Self == 0 {
			s.Self = os.Getpid()
		}
		if s.Deadline <= 0 {
			s.Deadline = DefaultDeadline
		}
		s.slot = make(chan struct{}, 1)
	})
}

// Close gives up what the clipboard holds for Hearth.
func (s *Service) Close() {
	s.init()
	s.Clipboard.Close()
}

// run runs fn alone and within the deadline. A call whose deadline passes
// answers at once; fn goes on to its end holding the slot, so a host that
// hangs makes later calls wait (and time out), never pile up.
func (s *Service) run(ctx context.Context, what string, fn func() (any, error)) (any, error) {
	s.init()
	ctx, cancel := context.WithTimeout(ctx, s.Deadline)
	defer cancel()
	select {
	case s.slot <- struct{}{}:
	case <-ctx.Done():
		return nil, primitive.Blocked("busy", "%s: another screen or clipboard call is still running (%v)", what, ctx.Err())
	}
	type answer struct {
		res any
		err error
	}
	done := make(chan answer, 1)
	go func() {
		defer func() { <-s.slot }()
		defer func() {
			if r := recover(); r != nil {
				s.Log.Error("screen call panicked", "call", what, "panic", r)
				done <- answer{nil, primitive.Failed("internal", "%s failed inside Hearth", what)}
			}
		}()
		res, err := fn()
		done <- answer{res, err}
	}()
	select {
	case a := <-done:
		return a.res, a.err
	case <-ctx.Done():
		return nil, primitive.Failed("timeout", "%s did not finish within %v: %v", what, s.Deadline, ctx.Err())
	}
}

// ShotInput is ui.screenshot's input: at most one of hwnd, process_id,
// monitor and region (none: monitor 1).
type ShotInput struct {
	HWND      uint64 `json:"hwnd,omitempty"`
	ProcessID int    `json:"process_id,omitempty"`
	Monitor   int    `json:"monitor,omitempty"`
	Region    *Rect  `json:"region,omitempty"`
	Format    string `json:"format,omitempty"`
	Quality   int    `json:"quality,omitempty"`
	MaxWidth  int    `json:"max_width,omitempty"`
	MaxBytes  int    `json:"max_bytes,omitempty"`
}

// check refuses input that can never run, naming the field.
func (in *ShotInput) check() error {
	n := 0
	for _, set := range []bool{in.HWND != 0, in.ProcessID != 0, in.Monitor != 0, in.Region != nil} {
		if set {
			n++
		}
	}
	if n > 1 {
		return invalid("hwnd, process_id, monitor, region: give at most one target")
	}
	if in.Region != nil && (in.Region.W <= 0 || in.Region.H <= 0) {
		return invalid("region: w and h must be positive")
	}
	if in.Quality != 0 && in.Format != "jpeg" {
		return invalid("quality: only for format jpeg")
	}
	return nil
}

func invalid(format string, args ...any) error {
	return primitive.Failed("invalid_input", "ui.screenshot: "+format, args...)
}

// Shot is ui.screenshot's result. The image itself goes to the caller as
// image content (primitive.ImageResult); the JSON says what it shows.
type Shot struct {
	// Target names what was captured: "window", "monitor" or "region".
	Target string `json:"target"`
	HWND   uint64 `json:"hwnd,omitempty"`
	// ProcessID owns the captured window, when known.
	ProcessID int    `json:"process_id,omitempty"`
	Title     string `json:"title,omitempty"`
	Monitor   int    `json:"monitor,omitempty"`
	// Bounds is the screen rectangle captured, in the physical pixels
	// ui.snapshot's bounds use: image pixel (x, y) shows screen point
	// (bounds.x + x/scale, bounds.y + y/scale).
	Bounds Rect    `json:"bounds"`
	Width  int     `json:"width"`
	Height int     `json:"height"`
	Scale  float64 `json:"scale"`
	// MonitorScale is the display scale of the monitor showing most of
	// bounds (its DPI over 96: 1.5 at 150 %): how large things look
	// there. Bounds stay physical pixels on every monitor, whatever its
	// scale, as do ui.snapshot's bounds and a fallback click's point.
	MonitorScale float64 `json:"monitor_scale"`
	Format       string  `json:"format"`
	MimeType     string  `json:"mime_type"`
	Quality      int     `json:"quality,omitempty"`
	Bytes        int     `json:"bytes"`
	// BlackedOut are the parts of bounds covered by Hearth's own windows,
	// painted black.
	BlackedOut []Rect `json:"blacked_out,omitempty"`
	// ImageNote says where the picture is.
	ImageNote string `json:"image"`

	data []byte
}

// imageNote is Shot.Image: the bytes are in the answer's image content
// and nowhere else.
const imageNote = "sent as image content with the answer of the call that captured it; Hearth keeps no copy"

// Image implements primitive.ImageResult.
func (s *Shot) Image() (string, []byte) {
	if s == nil {
		return "", nil
	}
	return s.MimeType, s.data
}

// Screenshot captures the input's target.
func (s *Service) Screenshot(ctx context.Context, in ShotInput) (*Shot, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	res, err := s.run(ctx, "ui.screenshot", func() (any, error) { return s.shoot(in) })
	if err != nil {
		return nil, err
	}
	return res.(*Shot), nil
}

func (s *Service) shoot(in ShotInput) (*Shot, error) {
	format, quality := "png", 0
	if in.Format == "jpeg" {
		format, quality = "jpeg", DefaultQuality
		if in.Quality != 0 {
			quality = in.Quality
		}
	}
	maxWidth, maxBytes := DefaultMaxWidth, DefaultMaxBytes
	if in.MaxWidth != 0 {
		maxWidth = in.MaxWidth
	}
	if in.MaxBytes != 0 {
		maxBytes = in.MaxBytes
	}
	d, err := s.OpenDisplay()
	if err != nil {
		return nil, unavailable(err)
	}
	defer d.Close()
	wins, err := d.Windows()
	if err != nil {
		// Hearth's own windows could not be found, so they could not be
		// kept out of the picture: nothing is captured.
		return nil, primitive.Failed("capture_failed", "ui.screenshot: list the windows on screen (to keep Hearth's own out of the picture): %v", err)
	}
	mons, err := d.Monitors()
	if err != nil || len(mons) == 0 {
		return nil, primitive.Failed("capture_failed", "ui.screenshot: find the monitors: %v", err)
	}
	shot := &Shot{Format: format, MimeType: "image/" + format, ImageNote: imageNote}
	var area Rect
	switch {
	case in.HWND != 0 || in.ProcessID != 0:
		w, err := s.targetWindow(in, wins)
		if err != nil {
			return nil, err
		}
		shot.Target, shot.HWND, shot.ProcessID, shot.Title, area = "window", w.HWND, w.ProcessID, w.Title, w.Bounds
	case in.Region != nil:
		shot.Target, area = "region", *in.Region
	default:
		m := max(in.Monitor, 1)
		if m > len(mons) {
			return nil, invalid("monitor: %d is not a monitor here (there are %d)", m, len(mons))
		}
		shot.Target, shot.Monitor, area = "monitor", m, mons[m-1]
	}
	var screen image.Rectangle
	for _, m := range mons {
		screen = screen.Union(m.image())
	}
	clip := area.image().Intersect(screen)
	if clip.Empty() {
		return nil, primitive.Conflict("offscreen", "ui.screenshot: %s %v lies off every monitor (the screen is %v)", shot.Target, area, fromImage(screen))
	}
	if clip.Dx() > MaxCapture || clip.Dy() > MaxCapture {
		return nil, invalid("region: %dx%d is larger than %d pixels a side", clip.Dx(), clip.Dy(), MaxCapture)
	}
	shot.Bounds = fromImage(clip)
	shot.MonitorScale = d.Scale(shot.Bounds)
	img, err := d.Capture(shot.Bounds)
	if err != nil {
		return nil, primitive.Failed("capture_failed", "ui.screenshot: read the pixels of %v: %v", shot.Bounds, err)
	}
	// A window of Hearth's that opened (or took the panel's title) while
	// the pixels were read is blacked out too: the windows are listed
	// again after the capture, and both listings count.
	after, err := d.Windows()
	if err != nil {
		return nil, primitive.Failed("capture_failed", "ui.screenshot: list the windows on screen again after the capture (to keep Hearth's own out of the picture): %v", err)
	}
	if shot.Target == "window" {
		for _, w := range after {
			if w.HWND == shot.HWND && s.own(w) {
				return nil, ownSurface(fmt.Sprintf("window %d", w.HWND))
			}
		}
	}
	shot.BlackedOut = s.blackOut(img, clip, bothListings(wins, after))
	enc, err := encode(img, format, quality, maxWidth, maxBytes)
	if err != nil {
		return nil, primitive.Failed("too_large", "ui.screenshot: %v", err)
	}
	shot.data, shot.Width, shot.Height, shot.Quality, shot.Bytes = enc.Data, enc.Width, enc.Height, enc.Quality, len(enc.Data)
	shot.Scale = float64(enc.Width) / float64(clip.Dx())
	return shot, nil
}

// own reports whether w is one of Hearth's operator surfaces: a window of
// Hearth's process, or one whose title shows the control panel.
func (s *Service) own(w Window) bool {
	return w.ProcessID == s.Self || s.IsPanel(w.Title)
}

// targetWindow resolves a window target: the window hwnd, or the topmost
// visible window of process_id. Hearth's own windows are refused.
func (s *Service) targetWindow(in ShotInput, wins []Window) (Window, error) {
	if in.ProcessID == s.Self {
		return Window{}, ownSurface(fmt.Sprintf("process %d", in.ProcessID))
	}
	for _, w := range wins {
		if in.HWND != 0 && w.HWND != in.HWND || in.ProcessID != 0 && (w.ProcessID != in.ProcessID || !w.Visible) {
			continue
		}
		if s.own(w) {
			return Window{}, ownSurface(fmt.Sprintf("window %d", w.HWND))
		}
		if !w.Visible {
			return Window{}, primitive.Conflict("not_visible", "ui.screenshot: window %d is not shown on screen (minimized or hidden)", w.HWND)
		}
		return w, nil
	}
	if in.HWND != 0 {
		return Window{}, primitive.Failed("not_found", "ui.screenshot: hwnd: no top-level window %d", in.HWND)
	}
	return Window{}, primitive.Failed("not_found", "ui.screenshot: process_id: process %d shows no window", in.ProcessID)
}

func ownSurface(what string) error {
	return primitive.Blocked("operator_surface", "ui.screenshot: %s is Hearth's own (its panel or tray); the model does not see Hearth's operator surfaces", what).
		WithDetails(map[string]any{"reason": "operator surface"})
}

// blackOut paints black every part of img (which shows clip) that one of
// Hearth's visible windows covers, and returns those parts. A window that
// lies under another is blacked out all the same: its bounds, not what
// shows of it, are what is hidden.
func (s *Service) blackOut(img *image.RGBA, clip image.Rectangle, wins []Window) []Rect {
	var out []Rect
	for _, w := range wins {
		if !w.Visible || !s.own(w) {
			continue
		}
		r := w.Bounds.image().Intersect(clip)
		if r.Empty() {
			continue
		}
		local := r.Sub(clip.Min)
		for y := local.Min.Y; y < local.Max.Y; y++ {
			row := img.Pix[y*img.Stride+local.Min.X*4 : y*img.Stride+local.Max.X*4]
			for i := 0; i < len(row); i += 4 {
				row[i], row[i+1], row[i+2], row[i+3] = 0, 0, 0, 0xff
			}
		}
		out = append(out, fromImage(r))
	}
	return out
}

// unavailable is the answer where the screen cannot be opened.
func unavailable(err error) error {
	reason := err.Error()
	if errors.Is(err, ErrNoDisplay) {
		return primitive.Blocked("unavailable", "the screen is unavailable on this host: %s", reason).WithDetails(map[string]any{"reason": reason})
	}
	return primitive.Failed("capture_failed", "open the screen: %s", reason)
}

// bothListings is after with the windows of before it does not list as
// they were (a window that moved counts where it was and where it is).
func bothListings(before, after []Window) []Window {
	type at struct {
		hwnd   uint64
		bounds Rect
	}
	seen := make(map[at]bool, len(after))
	out := append([]Window(nil), after...)
	for _, w := range after {
		seen[at{w.HWND, w.Bounds}] = true
	}
	for _, w := range before {
		if !seen[at{w.HWND, w.Bounds}] {
			out = append(out, w)
		}
	}
	return out
}
