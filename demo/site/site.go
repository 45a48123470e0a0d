// Package site embeds the demo page: index.html, style.css and app.js, which `bun run
// demo:build` bundles from demo/web (the page's TypeScript and the npm client). The bundle is
// committed so that the demo binary builds with Go alone and the page works offline.
package site

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// Handler serves the page's files.
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic("site: " + err.Error()) // the embedded tree always has static/
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A new image brings a new page: never serve a stale one from a cache.
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
