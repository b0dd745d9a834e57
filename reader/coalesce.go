package reader

import (
	"slices"
	"sort"
	"sync"
)

// A take plans the byte ranges it needs from dense pages (chunks, records,
// repetition-index entries) before it decodes anything, and reads them
// through a rawCache: ranges closer than coalesceGap are merged into one
// request, and every later lookup of a byte range inside a fetched block is
// served from memory, so a chunk two rows share is read once.

// coalesceGap is the largest gap between two wanted byte ranges that is
// read through rather than split into two requests. 4 KiB is one page of a
// local file system (and Lance's block size for local files, which its
// scheduler also uses to merge nearby requests): reading up to a block of
// unwanted bytes costs less than a second request. Object stores would
// favour a larger gap (Lance uses 64 KiB there).
const coalesceGap = 4 << 10

// byteRange is n bytes of the file from off.
type byteRange struct{ off, n uint64 }

// rawBlock is a fetched byte range of the file.
type rawBlock struct {
	off  uint64
	data []byte
}

// rawCache holds the byte ranges one call fetched, sorted by offset.
type rawCache struct {
	mu     sync.RWMutex // a take's leaves share one cache side by side
	blocks []rawBlock
}

// lookup returns bytes [off, off+n) when a fetched block holds them.
func (c *rawCache) lookup(off, n uint64) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	i := sort.Search(len(c.blocks), func(k int) bool { return c.blocks[k].off > off })
	// Blocks do not overlap when fetched through prefetch; a few earlier
	// blocks are checked for ranges fetched on a miss.
	for k := i - 1; k >= 0 && k >= i-4; k-- {
		b := c.blocks[k]
		if off >= b.off && off-b.off <= uint64(len(b.data)) && n <= uint64(len(b.data))-(off-b.off) {
			s := off - b.off
			return b.data[s : s+n : s+n], true
		}
	}
	return nil, false
}

func (c *rawCache) insert(b rawBlock) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := sort.Search(len(c.blocks), func(k int) bool { return c.blocks[k].off > b.off })
	c.blocks = slices.Insert(c.blocks, i, b)
}

// fetch returns bytes [off, off+n) of the file, from the cache when a
// fetched block holds them, else with one read (kept in the cache).
func (f *File) fetch(c *rawCache, off, n uint64) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	if b, ok := c.lookup(off, n); ok {
		return b, nil
	}
	b, err := f.readAt(off, n)
	if err != nil {
		return nil, err
	}
	if c != nil {
		c.insert(rawBlock{off, b})
	}
	return b, nil
}

// prefetch reads the given ranges not yet in the cache, merging ranges
// that overlap or lie less than coalesceGap apart into one request. rs is
// not modified.
func (f *File) prefetch(c *rawCache, rs []byteRange) error {
	rs = slices.DeleteFunc(slices.Clone(rs), func(r byteRange) bool {
		_, ok := c.lookup(r.off, r.n)
		return r.n == 0 || ok
	})
	if len(rs) == 0 {
		return nil
	}
	slices.SortFunc(rs, func(x, y byteRange) int {
		switch {
		case x.off < y.off:
			return -1
		case x.off > y.off:
			return 1
		}
		return 0
	})
	for _, r := range coalesce(rs, coalesceGap) {
		b, err := f.readAt(r.off, r.n)
		if err != nil {
			return err
		}
		c.insert(rawBlock{r.off, b})
	}
	return nil
}

// coalesce merges sorted ranges that overlap or lie at most gap bytes
// apart (in place).
func coalesce(rs []byteRange, gap uint64) []byteRange {
	if len(rs) == 0 {
		return rs
	}
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		end := last.off + last.n
		if r.off <= end || r.off-end <= gap {
			last.n = max(end, r.off+r.n) - last.off
			continue
		}
		out = append(out, r)
	}
	return out
}
