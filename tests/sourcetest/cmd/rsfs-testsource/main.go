// Command rsfs-testsource serves a generated ResourceSync Source until
// interrupted, for trying rsfs by hand.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"rsfs/tests/sourcetest"
)

func main() {
	if err := run(); err != nil {
		slog.Error("rsfs-testsource", "err", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	n := flag.Int("n", 1000, "number of generated resources")
	awkward := flag.Bool("awkward", false, "also publish the awkward resources")
	gz := flag.Bool("gzip", false, "serve lists as .xml.gz")
	layout := flag.String("layout", "1.1", "ResourceSync layout: 1.0 or 1.1")
	mirror := flag.Bool("mirror", false, "start a mirror server")
	sets := flag.Int("sets", 1, "number of resource sets (Capability Lists)")
	seed := flag.Int64("seed", 1, "seed of the generated content")
	docCache := flag.Int("doc-cache", 0, "bytes of rendered documents kept for repeated requests (0: 64 MiB)")
	flag.Parse()
	l, err := sourcetest.ParseLayout(*layout)
	if err != nil {
		return err
	}
	src, err := sourcetest.Start(sourcetest.Config{Addr: *addr, Resources: *n, Awkward: *awkward,
		Gzip: *gz, Layout: l, Mirror: *mirror, ResourceSets: *sets, Seed: *seed, DocCacheBytes: *docCache})
	if err != nil {
		return err
	}
	defer src.Close()
	fmt.Println(src.URL())
	if src.MirrorURL() != "" {
		fmt.Println("mirror:", src.MirrorURL())
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
	return nil
}
