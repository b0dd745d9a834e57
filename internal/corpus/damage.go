package corpus

// Damage returns deterministic damaged copies of a file: truncations, bit
// flips, bytes set to 0x00 or 0xFF and zeroed runs, at n positions spread
// over the file with half of them in its last quarter (the metadata, the
// offset tables and the footer, where a change reaches every decoder).
// Each variant is labelled with what was done.
func Damage(b []byte, n int, seed uint64) (labels []string, files [][]byte) {
	if len(b) == 0 {
		return nil, nil
	}
	x := seed*2862933555777941757 + 3037000493
	next := func(m int) int {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int(x % uint64(m))
	}
	add := func(label string, f []byte) {
		labels = append(labels, label)
		files = append(files, f)
	}
	tail := len(b) / 4
	for i := 0; i < n; i++ {
		pos := next(len(b))
		if i%2 == 1 && tail > 0 {
			pos = len(b) - 1 - next(tail)
		}
		c := append([]byte(nil), b...)
		switch i % 6 {
		case 0:
			add(itoa("truncate to ", pos), b[:pos])
			continue
		case 1:
			c[pos] ^= 1 << uint(next(8))
			add(itoa("flip a bit at ", pos), c)
		case 2:
			c[pos] = 0
			add(itoa("zero byte at ", pos), c)
		case 3:
			c[pos] = 0xFF
			add(itoa("0xFF at ", pos), c)
		case 4:
			for k := pos; k < len(c) && k < pos+8; k++ {
				c[k] = 0
			}
			add(itoa("zero 8 bytes at ", pos), c)
		case 5:
			c[pos] += byte(1 + next(3))
			add(itoa("increment byte at ", pos), c)
		}
	}
	return labels, files
}

func itoa(prefix string, v int) string {
	var d [20]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return prefix + string(d[i:])
}
