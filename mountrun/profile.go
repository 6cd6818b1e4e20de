package mountrun

import (
	"log/slog"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"runtime/pprof"
)

// ServePprof serves net/http/pprof's handlers on addr, on a mux of its
// own. (Importing net/http/pprof still adds them to http.DefaultServeMux in
// its init; no server of rsfs serves that mux.)
func ServePprof(addr string) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", httppprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", httppprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)
	slog.Warn("pprof server", "err", http.ListenAndServe(addr, mux))
}

// StartCPUProfile writes a CPU profile to the file at path until the
// function it returns is called.
func StartCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
