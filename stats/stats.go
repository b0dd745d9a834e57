// Package stats measures a page in one pass over its gathered leaf values and
// level streams: counts, value ranges and bit widths per 1024-value window,
// runs, a distinct-count estimate (HyperLogLog), constancy, sortedness and
// arithmetic steps. The selector decides from these numbers, without
// trial-encoding every candidate.
package stats
