package gatewayd

import (
	"io"
	"strconv"
	"sync"
	"time"
)

// LineLog writes `gateway serve`'s log lines to a writer in batches: a
// line is appended to a buffer, and a writer goroutine writes what has
// gathered at most every flushEvery, so a busy server makes one write
// per batch rather than one system call per request, and a slow writer
// never holds a request (lines beyond maxLogBuffer are dropped).
type LineLog struct {
	w      io.Writer
	prefix string

	mu      sync.Mutex
	buf     []byte
	dropped int
	kick    chan struct{}
	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

const (
	flushEvery   = 20 * time.Millisecond
	maxLogBuffer = 1 << 20
)

// NewLineLog writes lines, each after prefix, to w until Close.
func NewLineLog(w io.Writer, prefix string) *LineLog {
	l := &LineLog{w: w, prefix: prefix, kick: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	go l.run()
	return l
}

// Log adds one line.
func (l *LineLog) Log(s string) {
	l.mu.Lock()
	first := len(l.buf) == 0
	if len(l.buf)+len(l.prefix)+len(s)+1 > maxLogBuffer {
		l.dropped++
		l.mu.Unlock()
		return
	}
	l.buf = append(append(append(l.buf, l.prefix...), s...), '\n')
	l.mu.Unlock()
	if first {
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
}

// Close writes what is left and stops the writer.
func (l *LineLog) Close() {
	l.once.Do(func() { close(l.stop) })
	<-l.stopped
}

func (l *LineLog) run() {
	defer close(l.stopped)
	t := time.NewTimer(flushEvery)
	t.Stop()
	var spare []byte
	for {
		select {
		case <-l.kick:
			t.Reset(flushEvery)
			select {
			case <-t.C:
			case <-l.stop:
				t.Stop()
				l.flush(&spare)
				return
			}
		case <-l.stop:
			l.flush(&spare)
			return
		}
		l.flush(&spare)
	}
}

// flush writes the gathered lines, swapping buffers so that Log never
// waits for the writer.
func (l *LineLog) flush(spare *[]byte) {
	l.mu.Lock()
	b, dropped := l.buf, l.dropped
	l.buf, l.dropped = (*spare)[:0], 0
	l.mu.Unlock()
	if dropped > 0 {
		b = append(b, l.prefix...)
		b = append(b, "("...)
		b = strconv.AppendInt(b, int64(dropped), 10)
		b = append(b, " log lines dropped: the log could not keep up)\n"...)
	}
	if len(b) > 0 {
		l.w.Write(b)
	}
	if cap(b) <= maxLogBuffer {
		*spare = b
	} else {
		*spare = nil
	}
}
