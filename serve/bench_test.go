package serve

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkSingleTool posts one real tool per request from 64 keep-alive
// connections, in process, for profiling (go test -bench SingleTool
// -cpuprofile). bench/serveload measures the binary instead.
func BenchmarkSingleTool(b *testing.B) {
	benchPost(b, 64, func(addr string, tools [][]byte) [][]byte {
		reqs := make([][]byte, len(tools))
		for i, t := range tools {
			reqs[i] = rawRequest(addr, t)
		}
		return reqs
	})
}

// BenchmarkBatch posts {"tools": [...]} of 1,000 real tools per request.
func BenchmarkBatch(b *testing.B) {
	benchPost(b, 4, func(addr string, tools [][]byte) [][]byte {
		var reqs [][]byte
		for i := 0; i+1000 <= len(tools); i += 1000 {
			reqs = append(reqs, rawRequest(addr, toolsList(tools[i:i+1000])))
		}
		return reqs
	})
}

func rawRequest(addr string, body []byte) []byte {
	return append([]byte("POST /v1/classify HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nContent-Length: "+
		strconv.Itoa(len(body))+"\r\n\r\n"), body...)
}

func benchPost(b *testing.B, clients int, build func(addr string, tools [][]byte) [][]byte) {
	_, base := testServer(b, Config{})
	addr := base[len("http://"):]
	reqs := build(addr, innerTools(b))
	b.SetParallelism((clients + 1) / 2)
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			b.Error(err)
			return
		}
		defer conn.Close()
		br := bufio.NewReaderSize(conn, 64<<10)
		i := int(next.Add(997))
		for pb.Next() {
			i++
			if _, err := conn.Write(reqs[i%len(reqs)]); err != nil {
				b.Error(err)
				return
			}
			if err := discardResponse(br); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func discardResponse(br *bufio.Reader) error {
	status, err := br.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(status, []byte("HTTP/1.1 200 ")) {
		return fmt.Errorf("status %q", status)
	}
	n := -1
	for {
		h, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(h) <= 2 {
			break
		}
		if v, ok := bytes.CutPrefix(h, []byte("Content-Length: ")); ok {
			n, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
	_, err = br.Discard(n)
	return err
}
