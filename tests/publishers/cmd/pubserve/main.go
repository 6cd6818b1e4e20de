// Command pubserve serves one of package publishers' Sources on 127.0.0.1
// until interrupted, and prints the URL to mount or inspect:
//
//	go run ./tests/publishers/cmd/pubserve -publisher dspace
//	rsfs inspect http://127.0.0.1:PORT/dspace-resourcesync/sourcedescription.xml
//
// With -update, the publisher also makes its changes once (DSpace's update
// run, a Hyrax deposit, a POD upload, a resync round, a WEKO deposit), so
// its change documents hold entries. With -delay, every answer waits that
// long first (a distant Source). SIGUSR1 prints the requests answered so
// far: documents=N files=N heads=N (files counts the resources' requests,
// heads the HEADs among them).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"rsfs/tests/publishers"
)

type source interface {
	Close()
	SetDelay(time.Duration)
	DocRequests() int64
	FileRequests() (all, heads int64)
}

func main() {
	name := flag.String("publisher", "dspace", "dspace, hyrax, pod, resync or weko")
	n := flag.Int("n", 12, "how many items (Hyrax: works) to start with")
	update := flag.Bool("update", true, "make the publisher's changes once")
	delay := flag.Duration("delay", 0, "every answer waits this long first")
	flag.Parse()
	url, src, err := start(*name, *n, *update)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pubserve:", err)
		os.Exit(1)
	}
	defer src.Close()
	src.SetDelay(*delay)
	fmt.Println(url)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGUSR1)
	for s := range sig {
		if s != syscall.SIGUSR1 {
			return
		}
		files, heads := src.FileRequests()
		fmt.Printf("documents=%d files=%d heads=%d\n", src.DocRequests(), files, heads)
	}
}

func start(name string, n int, update bool) (string, source, error) {
	switch name {
	case "dspace":
		d, err := publishers.NewDSpace(n, true)
		if err != nil {
			return "", nil, err
		}
		if update {
			d.Create()
			d.Replace(1)
			d.Withdraw(2)
			d.Update()
		}
		return urlOf(d, "/dspace-resourcesync/sourcedescription.xml"), d, nil
	case "hyrax":
		h, err := publishers.NewHyrax(n)
		if err != nil {
			return "", nil, err
		}
		if update {
			h.CreateWork()
			h.UpdateAll(3)
		}
		return urlOf(h, "/"), h, nil
	case "pod":
		p, err := publishers.NewPOD()
		if err != nil {
			return "", nil, err
		}
		if update {
			p.Upload(0)
		}
		return urlOf(p, "/"), p, nil
	case "resync":
		r, err := publishers.NewResync(n)
		if err != nil {
			return "", nil, err
		}
		if update {
			r.Simulate([]string{"1", "2", "1"}, 1, []string{"3"})
		}
		return urlOf(r, "/"), r, nil
	case "weko":
		w, err := publishers.NewWEKO(n)
		if err != nil {
			return "", nil, err
		}
		if update {
			w.Deposit()
		}
		return urlOf(w, "/"), w, nil
	}
	return "", nil, fmt.Errorf("unknown publisher %q", name)
}

func urlOf(s interface{ URL() string }, path string) string { return s.URL() + path }
