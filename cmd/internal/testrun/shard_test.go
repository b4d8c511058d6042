package testrun

import (
	"fmt"
	"regexp"
	"testing"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		err  bool
	}{
		{"1/1", Shard{1, 1}, false},
		{"2/4", Shard{2, 4}, false},
		{" 3 / 3", Shard{3, 3}, false},
		{"0/4", Shard{}, true},
		{"5/4", Shard{}, true},
		{"1/0", Shard{}, true},
		{"2", Shard{}, true},
		{"a/b", Shard{}, true},
		{"-1/2", Shard{}, true},
	} {
		got, err := ParseShard(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v, err %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// shardFiles builds n files holding sizes[i] cases each.
func shardFiles(sizes ...int) []*File {
	var files []*File
	for i, n := range sizes {
		f := &File{Path: fmt.Sprintf("f%d.test.yaml", i)}
		for j := range n {
			f.Cases = append(f.Cases, &Case{Name: fmt.Sprintf("f%d case %d", i, j)})
		}
		files = append(files, f)
	}
	return files
}

func TestSelectShardsPartitionTheSuite(t *testing.T) {
	files := shardFiles(7, 1, 0, 12, 3)
	for _, filter := range []*regexp.Regexp{nil, regexp.MustCompile(`[02468]$`)} {
		all := Select(files, filter, Shard{})
		for n := 1; n <= 9; n++ {
			seen := map[*Case]int{}
			minN, maxN := len(all), 0
			for i := 1; i <= n; i++ {
				part := Select(files, filter, Shard{i, n})
				again := Select(files, filter, Shard{i, n})
				if fmt.Sprint(part) != fmt.Sprint(again) {
					t.Fatalf("shard %d/%d differs between two selections", i, n)
				}
				minN, maxN = min(minN, len(part)), max(maxN, len(part))
				for k, s := range part {
					seen[s.Case]++
					if k > 0 && !before(files, part[k-1], s) {
						t.Errorf("shard %d/%d is not in file and case order at %q", i, n, s.Case.Name)
					}
				}
			}
			if len(seen) != len(all) {
				t.Errorf("filter %v, %d shards: %d of %d cases picked", filter, n, len(seen), len(all))
			}
			for c, k := range seen {
				if k != 1 {
					t.Errorf("filter %v, %d shards: %q picked %d times", filter, n, c.Name, k)
				}
			}
			if maxN-minN > 1 {
				t.Errorf("filter %v, %d shards: sizes from %d to %d, want a difference of at most one", filter, n, minN, maxN)
			}
		}
	}
}

func before(files []*File, a, b Selected) bool {
	pos := func(s Selected) (int, int) {
		for i, f := range files {
			for j, c := range f.Cases {
				if c == s.Case {
					return i, j
				}
			}
		}
		return -1, -1
	}
	ai, aj := pos(a)
	bi, bj := pos(b)
	return ai < bi || ai == bi && aj < bj
}

// The split depends only on the order of the cases, so a shard is named by
// position: adding nothing and rerunning picks the same names.
func TestSelectShardIsStable(t *testing.T) {
	files := shardFiles(4, 4)
	var got []string
	for _, s := range Select(files, nil, Shard{2, 3}) {
		got = append(got, s.Case.Name)
	}
	want := []string{"f0 case 1", "f1 case 0", "f1 case 3"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("shard 2/3 = %q, want %q", got, want)
	}
}
