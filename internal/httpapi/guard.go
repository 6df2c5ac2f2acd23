package httpapi

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/cairnlog/cairn/internal/termtext"
)

// checkSameOrigin refuses a state-changing request (any method but GET,
// HEAD and OPTIONS) that a web page on another origin could have sent: a
// request whose Origin is not this server's own (or the loopback address
// of the same port), whose Sec-Fetch-Site says it came from another site,
// or whose Content-Type is not application/json. The last matters most:
// a page may send text/plain or a form to any address without asking,
// but application/json needs a CORS preflight, which this server never
// grants. These checks hold with a token as without one.
func checkSameOrigin(r *http.Request) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return &apiError{status: http.StatusForbidden, code: "forbidden",
			msg: fmt.Sprintf("cross-site request refused (Sec-Fetch-Site: %s): this API does not take requests from web pages of other sites", shownPath(site))}
	}
	if origin := r.Header.Values("Origin"); len(origin) > 0 {
		if len(origin) > 1 || !sameOrigin(origin[0], r) {
			return &apiError{status: http.StatusForbidden, code: "forbidden",
				msg: fmt.Sprintf("cross-origin request refused: Origin %s is not this server (%s)", termtext.Quote(strings.Join(origin, ", ")), shownPath(r.Host))}
		}
	}
	if r.Method == http.MethodDelete && r.ContentLength == 0 {
		// No body to type; a page cannot send DELETE to another origin
		// without a CORS preflight, which this server never grants.
		return nil
	}
	if cts := r.Header.Values("Content-Type"); len(cts) > 1 {
		// Another reader of the request may take another of them.
		return &apiError{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type",
			msg: fmt.Sprintf("Content-Type is given %d times (%s): send it once, as application/json", len(cts), strings.Join(cts, ", "))}
	}
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if cs, ok := params["charset"]; err == nil && mt == "application/json" && ok && !strings.EqualFold(cs, "utf-8") {
		// The body would be read as UTF-8 all the same, and stored wrong.
		return &apiError{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type",
			msg: fmt.Sprintf("Content-Type %s: JSON bodies are UTF-8; send charset=utf-8 or no charset", shownPath(ct))}
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return &apiError{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type",
			msg: fmt.Sprintf("Content-Encoding %s: send the request body uncompressed", shownPath(ce))}
	}
	if err != nil || mt != "application/json" {
		if ct == "" {
			ct = "none"
		}
		return &apiError{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type",
			msg: fmt.Sprintf("Content-Type %s: send the request body as Content-Type: application/json", shownPath(ct))}
	}
	return nil
}

// sameOrigin reports whether origin (an Origin header) names the server r
// was addressed to: the same host and port, or a loopback name with the
// same port when r was addressed to a loopback name.
func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") {
		return false // "null" among others
	}
	oh, op := splitHostPort(u.Host, defaultPort(u.Scheme))
	serverScheme := "http"
	if r.TLS != nil {
		serverScheme = "https"
	}
	rh, rp := splitHostPort(r.Host, defaultPort(serverScheme))
	if op != rp {
		return false
	}
	return strings.EqualFold(oh, rh) || (loopbackHost(oh) && loopbackHost(rh))
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// splitHostPort splits host[:port], taking def when there is no port.
func splitHostPort(hp, def string) (host, port string) {
	if h, p, err := net.SplitHostPort(hp); err == nil {
		return strings.Trim(h, "[]"), p
	}
	return strings.Trim(hp, "[]"), def
}
