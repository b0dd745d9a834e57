package dataset

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/planarlance/planar/internal/atomicfile"
)

// objectWriter streams one new object, so that a data file never has to be
// held in memory whole. Nothing is visible under the key until Close
// returns nil; Abort discards what was written. After Close or Abort the
// writer is spent.
type objectWriter interface {
	Write(p []byte) (int, error)
	// Close publishes the object (replacing any object under the key).
	Close() error
	// Abort discards the object; it is safe after a failed Write or Close.
	Abort()
}

// localWriter writes a temporary file beside the key's path and renames it
// into place on Close.
type localWriter struct {
	path string
	f    *atomicfile.File
	bw   *bufio.Writer
}

// localWriteBuffer is the write buffer of a local object writer.
const localWriteBuffer = 1 << 20

// Create writes the object under a temporary name, published by Close
// without a directory sync: data files are synced a directory at a time
// (location.syncData), manifests by Put and PutIfNotExists.
func (s *localStore) Create(ctx context.Context, key string) (objectWriter, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", key, err)
	}
	f, err := atomicfile.Create(p)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", key, err)
	}
	return &localWriter{path: p, f: f, bw: bufio.NewWriterSize(f, localWriteBuffer)}, nil
}

func (w *localWriter) Write(p []byte) (int, error) {
	if w.f == nil {
		return 0, ErrClosed
	}
	return w.bw.Write(p)
}

func (w *localWriter) Close() error {
	if w.f == nil {
		return ErrClosed
	}
	f := w.f
	w.f = nil
	if err := w.bw.Flush(); err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	if err := f.PublishUnsynced(); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	return nil
}

func (w *localWriter) Abort() {
	if w.f != nil {
		w.f.Abort()
		w.f = nil
	}
}

// S3 multipart uploads: parts start at s3PartSize and grow by that much every
// s3PartsPerStep parts, so the 10,000 parts S3 allows cover 440 GiB (more
// than Lance's 90 GiB default file limit) while small files stay one
// PutObject and memory stays at a few parts.
const (
	s3PartSize     = 8 << 20
	s3PartsPerStep = 1000
	s3MaxParts     = 10000
)

// s3PartSizeFor is the size of 1-based part n.
func s3PartSizeFor(n int32) int {
	return s3PartSize * (1 + int(n-1)/s3PartsPerStep)
}

// s3Uploads is how many parts of one object are sent at once: a part's
// round trip overlaps the next ones' and the encoding of what follows, so
// a writer waits on the store only when that many parts are in flight.
const s3Uploads = 4

// s3Writer streams an object to S3: one PutObject when it fits in its first
// part, otherwise a multipart upload whose parts are sent by s3Uploads
// background goroutines while the next part fills (at most s3Uploads+1 part
// buffers in all).
type s3Writer struct {
	ctx    context.Context
	s      *s3Store
	key    string // the caller's key, for errors
	k      string // the full S3 key
	buf    []byte // the part being filled
	next   int32  // number of the part being filled
	id     string // multipart upload id; "" until the first part is sent
	parts  chan s3Part
	free   chan []byte
	done   chan struct{}
	mu     sync.Mutex
	err    error // the first uploader's error, set before done closes
	sent   []types.CompletedPart
	closed bool
}

type s3Part struct {
	n int32
	b []byte
}

func (s *s3Store) Create(ctx context.Context, key string) (objectWriter, error) {
	k, err := s.key(key)
	if err != nil {
		return nil, err
	}
	return &s3Writer{ctx: ctx, s: s, key: key, k: k, next: 1, buf: make([]byte, 0, s3PartSize)}, nil
}

func (w *s3Writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, ErrClosed
	}
	n := 0
	for len(p) > 0 {
		room := s3PartSizeFor(w.next) - len(w.buf)
		if room == 0 {
			if err := w.sendPart(); err != nil {
				return n, err
			}
			continue
		}
		c := min(room, len(p))
		w.buf = append(w.buf, p[:c]...)
		p = p[c:]
		n += c
	}
	return n, nil
}

// sendPart hands the full part buffer to the uploader, starting the
// multipart upload first if needed.
func (w *s3Writer) sendPart() error {
	if w.id == "" {
		var out *s3.CreateMultipartUploadOutput
		err := retry(w.ctx, func() error {
			var err error
			out, err = w.s.client.CreateMultipartUpload(w.ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(w.s.bucket), Key: aws.String(w.k)})
			return err
		})
		if err != nil {
			return s3Err("create multipart upload", w.key, err)
		}
		w.id = aws.ToString(out.UploadId)
		w.parts = make(chan s3Part)
		w.free = make(chan []byte, s3Uploads)
		w.done = make(chan struct{})
		var wg sync.WaitGroup
		for range s3Uploads {
			wg.Add(1)
			go func(parts <-chan s3Part) {
				defer wg.Done()
				w.upload(parts)
			}(w.parts)
		}
		go func() {
			wg.Wait()
			close(w.done)
		}()
	}
	if w.next > s3MaxParts {
		return fmt.Errorf("put %s: more than %d parts: %w", w.key, s3MaxParts, ErrInvalidOption)
	}
	if err := w.failure(); err != nil {
		return err // a part failed: stop before encoding more
	}
	select {
	case w.parts <- s3Part{n: w.next, b: w.buf}:
	case <-w.done:
		return w.failure()
	}
	w.next++
	select {
	case b := <-w.free:
		w.buf = b[:0]
	default:
		w.buf = make([]byte, 0, s3PartSizeFor(w.next))
	}
	if cap(w.buf) < s3PartSizeFor(w.next) {
		w.buf = make([]byte, 0, s3PartSizeFor(w.next))
	}
	return nil
}

// upload sends parts until the channel closes or one fails; after a
// failure the other uploaders drain what is left unsent.
func (w *s3Writer) upload(parts <-chan s3Part) {
	for p := range parts {
		if w.failure() != nil {
			continue
		}
		var out *s3.UploadPartOutput
		err := retry(w.ctx, func() error {
			var err error
			out, err = w.s.client.UploadPart(w.ctx, &s3.UploadPartInput{
				Bucket: aws.String(w.s.bucket), Key: aws.String(w.k), UploadId: aws.String(w.id),
				PartNumber: aws.Int32(p.n), Body: bytes.NewReader(p.b), ContentLength: aws.Int64(int64(len(p.b))),
			})
			return err
		})
		w.mu.Lock()
		if err != nil && w.err == nil {
			w.err = s3Err(fmt.Sprintf("upload part %d of", p.n), w.key, err)
		}
		if err == nil {
			w.sent = append(w.sent, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(p.n)})
		}
		w.mu.Unlock()
		if err != nil {
			continue // the transport may still hold the body after an error
		}
		select {
		case w.free <- p.b:
		default:
		}
	}
}

// failure is the first uploader's error, if any.
func (w *s3Writer) failure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// finish stops the uploader and returns its error.
func (w *s3Writer) finish() error {
	if w.parts == nil {
		return nil
	}
	close(w.parts)
	w.parts = nil
	<-w.done
	// Parts finish in any order; S3 wants them listed in order.
	slices.SortFunc(w.sent, func(a, b types.CompletedPart) int { return int(aws.ToInt32(a.PartNumber) - aws.ToInt32(b.PartNumber)) })
	return w.err
}

func (w *s3Writer) Close() error {
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	if w.id == "" {
		err := w.s.put(w.ctx, w.key, w.buf, false)
		w.buf = nil
		return err
	}
	// The last part may be smaller than the minimum; S3 allows that.
	if len(w.buf) > 0 {
		select {
		case w.parts <- s3Part{n: w.next, b: w.buf}:
		case <-w.done:
		}
	}
	if err := w.finish(); err != nil {
		w.abortUpload()
		return err
	}
	w.buf = nil
	err := retry(w.ctx, func() error {
		_, err := w.s.client.CompleteMultipartUpload(w.ctx, &s3.CompleteMultipartUploadInput{
			Bucket: aws.String(w.s.bucket), Key: aws.String(w.k), UploadId: aws.String(w.id),
			MultipartUpload: &types.CompletedMultipartUpload{Parts: w.sent},
		})
		return err
	})
	if err != nil {
		w.abortUpload()
		return s3Err("complete multipart upload", w.key, err)
	}
	w.id = "" // complete: nothing left to abort
	return nil
}

func (w *s3Writer) Abort() {
	if !w.closed {
		w.closed = true
		_ = w.finish()
	}
	w.buf = nil
	w.abortUpload()
}

// abortUpload drops an unfinished multipart upload's parts, best effort; a
// completed or never started upload is left alone.
func (w *s3Writer) abortUpload() {
	if w.id == "" {
		return
	}
	id := w.id
	w.id = ""
	// Best effort: servers can also expire abandoned uploads by lifecycle rule.
	_, _ = w.s.client.AbortMultipartUpload(context.WithoutCancel(w.ctx), &s3.AbortMultipartUploadInput{
		Bucket: aws.String(w.s.bucket), Key: aws.String(w.k), UploadId: aws.String(id),
	})
}
