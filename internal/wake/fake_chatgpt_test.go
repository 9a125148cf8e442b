//go:build !windows

package wake

import (
	_ "embed"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

//go:embed testdata/fake_chatgpt.html
var fakeChatGPTPage []byte

// FakeChatGPT stands in for ChatGPT's conversation pages, which cannot
// exist here: a loopback server of /c/<id> pages that show a transcript
// (user messages and tool results as text), a composer and a send button
// (a stop button while "generating"), and record what was sent.
type FakeChatGPT struct {
	srv *httptest.Server

	mu    sync.Mutex
	convs map[string]*fakeConv
	// OnSend, when set, is called (outside the lock) for each message sent.
	OnSend func(conv, text string)
}

type fakeMsg struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

type fakeConv struct {
	Messages   []fakeMsg `json:"messages"`
	Generating bool      `json:"generating"`
	sent       []string
	sentAt     []time.Time
}

// NewFakeChatGPT serves the fake on 127.0.0.1.
func NewFakeChatGPT(t testing.TB) *FakeChatGPT {
	f := &FakeChatGPT{convs: map[string]*fakeConv{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /c/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(fakeChatGPTPage)
	})
	mux.HandleFunc("GET /c/{id}/transcript", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		c := f.conv(r.PathValue("id"))
		b, _ := json.Marshal(c)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
	mux.HandleFunc("POST /c/{id}/send", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		id, text := r.PathValue("id"), string(b)
		f.mu.Lock()
		c := f.conv(id)
		c.sent = append(c.sent, text)
		c.sentAt = append(c.sentAt, time.Now())
		c.Messages = append(c.Messages, fakeMsg{Role: "user", Text: text})
		on := f.OnSend
		f.mu.Unlock()
		if on != nil {
			go on(id, text)
		}
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *FakeChatGPT) conv(id string) *fakeConv {
	c := f.convs[id]
	if c == nil {
		c = &fakeConv{Messages: []fakeMsg{}}
		f.convs[id] = c
	}
	return c
}

// Origin is the fake's origin.
func (f *FakeChatGPT) Origin() string { return f.srv.URL }

// URL is conversation id's page.
func (f *FakeChatGPT) URL(id string) string { return f.srv.URL + "/c/" + id }

// Show appends a message (a tool result's text, the model's reply) to
// conversation id.
func (f *FakeChatGPT) Show(id, role, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.conv(id)
	c.Messages = append(c.Messages, fakeMsg{Role: role, Text: text})
}

// Clear empties conversation id's transcript.
func (f *FakeChatGPT) Clear(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conv(id).Messages = []fakeMsg{}
}

// SetGenerating shows or hides the stop button of conversation id.
func (f *FakeChatGPT) SetGenerating(id string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conv(id).Generating = on
}

// Sent returns what was sent in conversation id.
func (f *FakeChatGPT) Sent(id string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.conv(id).sent...)
}

// SentAt returns when each message of conversation id was sent.
func (f *FakeChatGPT) SentAt(id string) []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.conv(id).sentAt...)
}

// waitFor polls cond every 20 ms for up to a minute (generous: the
// machine is shared and a browser is slow to start).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
