package main

import (
	"archive/zip"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// Each layout lies as issue 33 describes it: flat 200 files a directory,
// fanout 850 directories of about 6 files two levels deep with
// consecutive files in different directories, items a BagIt-like bag of
// 5 named files each.
func TestLayouts(t *testing.T) {
	const n = 5000
	for _, tc := range []struct {
		layout          string
		dirs, leafDirs  int
		minPer, maxPer  int
		neighboursApart bool
	}{
		{"flat", 25, 25, 200, 200, false},
		{"fanout", 860, 850, 5, 6, true},
		{"items", 2000, 2000, 2, 3, false},
	} {
		t.Run(tc.layout, func(t *testing.T) {
			l := layouts[tc.layout]
			per := map[string]int{}
			var paths []string
			for i := range n {
				p := l.path(i)
				if !strings.HasPrefix(p, "data/") {
					t.Fatalf("file %d at %s, not under data/", i, p)
				}
				per[path.Dir(p)]++
				paths = append(paths, p)
				if tc.neighboursApart && i > 0 && path.Dir(p) == path.Dir(paths[i-1]) {
					t.Fatalf("files %d and %d share %s", i-1, i, path.Dir(p))
				}
			}
			if got := dirsUnder(paths); got != tc.dirs {
				t.Errorf("%d directories under data/, want %d", got, tc.dirs)
			}
			if len(per) != tc.leafDirs {
				t.Errorf("%d directories hold files, want %d", len(per), tc.leafDirs)
			}
			for d, c := range per {
				if c < tc.minPer || c > tc.maxPer {
					t.Errorf("%s holds %d files, want %d to %d", d, c, tc.minPer, tc.maxPer)
				}
			}
		})
	}
	var item []string
	for i := range itemMembers {
		item = append(item, itemPath(itemMembers*7+i))
	}
	want := []string{"data/item00007/data/file1.txt", "data/item00007/data/file2.txt", "data/item00007/data/file3.txt",
		"data/item00007/manifest-md5.txt", "data/item00007/bag-info.txt"}
	if strings.Join(item, " ") != strings.Join(want, " ") {
		t.Errorf("item 7 is %v, want %v", item, want)
	}
}

// The dump's members are in the order the files were created, which in
// the fanout layout is not the paths' order.
func TestDumpInCreationOrder(t *testing.T) {
	root := t.TempDir()
	tree, err := genTree(root, layouts["fanout"], 20, 64, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := tree.writeDumpDocs("dump-h1", filepath.Join(root, "docs"), "http://127.0.0.1:1/", "dumps-h1", 1000, false); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(filepath.Join(tree.www, "dumps-h1", "part00000.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var got []string
	for _, f := range zr.File[1:] { // after manifest.xml
		got = append(got, f.Name)
	}
	var want []string
	for i := range 20 {
		want = append(want, fanoutPath(i))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("members %v, want %v", got, want)
	}
}

// Every walker passes over the whole tree and fails when one file is
// short, so a mount that returns less is a failure, not a fast figure.
func TestWalkersCheckWhatTheyRead(t *testing.T) {
	root := t.TempDir()
	tree, err := genTree(root, layouts["items"], 25, 2048, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"grep", "rsync", "tar", "restic"} {
		w := walkers[name]
		if name == "restic" {
			if _, err := exec.LookPath("restic"); err != nil {
				t.Log("restic is not installed: not checked")
				continue
			}
		}
		walk := func() error {
			scratch := filepath.Join(root, "scratch")
			if err := w.prepare(scratch); err != nil {
				return err
			}
			cmd := strings.ReplaceAll(strings.ReplaceAll(w.cmd(tree), "SCRATCH", scratch), "DIR", tree.www)
			return exec.Command("bash", "-c", "set -o pipefail; "+cmd).Run()
		}
		if err := walk(); err != nil {
			t.Errorf("%s over the whole tree: %v", name, err)
		}
		short := filepath.Join(tree.www, tree.files[3].Path)
		body, err := os.ReadFile(short)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(short, body[:100], 0o644); err != nil {
			t.Fatal(err)
		}
		if name != "restic" { // restic backs up what it finds; a short file is still a file
			if err := walk(); err == nil {
				t.Errorf("%s passed with %s cut to 100 bytes", name, tree.files[3].Path)
			}
		}
		if err := os.WriteFile(short, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
