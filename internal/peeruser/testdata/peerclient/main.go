// Command peerclient is the client the peeruser tests start as another
// operating-system account: it sends one HTTP request and prints what
// came back as JSON, or ("hold") opens N connections (default 1), prints
// the last one's own address and keeps them open until its stdin closes.
//
//	peerclient request METHOD URL BODY [HEADER=VALUE ...]
//	peerclient hold ADDR [N]
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

type answer struct {
	Status int    `json:"status"`
	Body   string `json:"body"`
	Error  string `json:"error,omitempty"`
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "peerclient:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: peerclient request|hold ...")
	}
	switch args[0] {
	case "request":
		if len(args) < 4 {
			return fmt.Errorf("usage: peerclient request METHOD URL BODY [HEADER=VALUE ...]")
		}
		return request(args[1], args[2], args[3], args[4:])
	case "hold":
		n := 1
		if len(args) == 3 {
			var err error
			if n, err = strconv.Atoi(args[2]); err != nil || n < 1 {
				return fmt.Errorf("hold: N %q is not a positive number", args[2])
			}
		} else if len(args) != 2 {
			return fmt.Errorf("usage: peerclient hold ADDR [N]")
		}
		var last net.Conn
		for i := range n {
			c, err := net.Dial("tcp", args[1])
			if err != nil {
				return fmt.Errorf("connection %d of %d: %w", i+1, n, err)
			}
			defer c.Close()
			last = c
		}
		fmt.Println(last.LocalAddr().String())
		io.Copy(io.Discard, os.Stdin)
		return nil
	}
	return fmt.Errorf("unknown mode %q", args[0])
}

func request(method, url, body string, headers []string) error {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, "=")
		req.Header.Set(k, v)
	}
	client := &http.Client{
		Transport:     &http.Transport{Proxy: nil},
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	var a answer
	resp, err := client.Do(req)
	if err != nil {
		a.Error = err.Error()
	} else {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		a.Status, a.Body = resp.StatusCode, string(b)
	}
	return json.NewEncoder(os.Stdout).Encode(a)
}
