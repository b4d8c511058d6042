package testrun

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Shard is one part of a suite split over machines (`test --shard I/N`):
// the Index-th of Count parts, counted from 1. The zero Shard is the whole
// suite.
type Shard struct{ Index, Count int }

// ParseShard reads "I/N" with 1 <= I <= N.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	idx, err1 := strconv.Atoi(strings.TrimSpace(i))
	cnt, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("--shard %q: want I/N, e.g. --shard 2/4 for the second of four parts", s)
	}
	if cnt < 1 || idx < 1 || idx > cnt {
		return Shard{}, fmt.Errorf("--shard %q: want 1 <= I <= N", s)
	}
	return Shard{Index: idx, Count: cnt}, nil
}

// String is "I/N", or "" for the whole suite.
func (s Shard) String() string {
	if s.Count <= 1 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Selected is one case picked to run.
type Selected struct {
	File *File
	Case *Case
}

// Select returns the cases of files whose name matches filter (nil: all)
// and that belong to shard, in file and case order.
//
// The split is deterministic: the matching cases are numbered in file and
// case order (files in the order given, which for a folder is the walk's
// lexical order) and the k-th goes to shard k mod N. Every case is in
// exactly one shard, the shards differ in size by at most one case, and
// the same command line picks the same cases on every machine and run.
// Skipped cases count like any other, so that --list shows what a shard
// holds.
func Select(files []*File, filter *regexp.Regexp, shard Shard) []Selected {
	var out []Selected
	k := 0
	for _, f := range files {
		for _, c := range f.Cases {
			if filter != nil && !filter.MatchString(c.Name) {
				continue
			}
			mine := shard.Count <= 1 || k%shard.Count == shard.Index-1
			k++
			if mine {
				out = append(out, Selected{File: f, Case: c})
			}
		}
	}
	return out
}
