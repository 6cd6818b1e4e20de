package fetch

import (
	"bufio"
	"net/http"
	"strings"
)

// writeRequest writes req on w for the pipeline. A GET with no body whose
// host, target and headers need no cleaning is written directly; anything
// else by Request.Write. The bytes mean the same: Request.Write builds a
// transfer writer, copies the URL and sorts the headers of every request,
// and those were two fifths of the pipeline writer's CPU over a first
// `grep -r` (issue 42). The headers go in the map's order, which HTTP does
// not care about (RFC 9110 §5.3: only a field's lines keep their order).
func writeRequest(w *bufio.Writer, req *http.Request) error {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	uri := req.URL.RequestURI()
	if !plainGET(req, host, uri) {
		return req.Write(w)
	}
	w.WriteString("GET ")
	w.WriteString(uri)
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host)
	w.WriteString("\r\n")
	if _, ok := req.Header["User-Agent"]; !ok {
		w.WriteString("User-Agent: Go-http-client/1.1\r\n") // as Request.Write
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(v)
			w.WriteString("\r\n")
		}
	}
	_, err := w.WriteString("\r\n")
	return err
}

// plainGET reports whether req is a GET that writeRequest may write
// directly: no body nor trailer, a host and target of plain characters,
// and headers that Request.Write would write as they stand (names of token
// characters, values with no line breaks nor edge blanks, none of the
// fields it writes or drops itself).
func plainGET(req *http.Request, host, uri string) bool {
	if req.Method != http.MethodGet || req.Body != nil && req.Body != http.NoBody || req.ContentLength != 0 ||
		len(req.TransferEncoding) > 0 || req.Trailer != nil || req.Close || req.URL.Opaque != "" ||
		host == "" || !plainText(host, false) || strings.ContainsAny(host, "%/") ||
		!plainText(uri, false) || !strings.HasPrefix(uri, "/") {
		return false
	}
	for k, vs := range req.Header {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer", "Connection":
			return false
		}
		if k == "User-Agent" && len(vs) != 1 || k == "" || !plainText(k, false) || strings.ContainsAny(k, " :\"(),/;<=>?@[\\]{}") {
			return false
		}
		for _, v := range vs {
			if v == "" || !plainText(v, true) || v[0] == ' ' || v[len(v)-1] == ' ' {
				return false
			}
		}
	}
	return true
}

// plainText reports whether s is printable ASCII; spaces only if allowed.
func plainText(s string, spaces bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c > '~' || c == ' ' && !spaces {
			return false
		}
	}
	return true
}
