package cmdutil

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/pflag"
)

// LogOptions are the logging flags of the long-running commands (run, serve, watch).
type LogOptions struct {
	// Format is text (key=value, the default) or json (one object per line).
	Format string
	// Level is debug, info (the default), warn or error.
	Level string
}

// AddLogFlags registers --log-format and --log-level into o, with defaultLevel.
func AddLogFlags(fs *pflag.FlagSet, o *LogOptions, defaultLevel string) {
	fs.StringVar(&o.Format, "log-format", "text", "log lines on stderr as text (key=value) or json (one object per line)")
	fs.StringVar(&o.Level, "log-level", defaultLevel, "least severe log lines shown: debug, info, warn or error")
}

// Logger is the logger the options describe, writing to w; an unknown format or level is a
// UsageError naming the flag.
func (o LogOptions) Logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	switch lvl := strings.ToLower(o.Level); lvl {
	case "", "info":
		level = slog.LevelInfo
	case "debug":
		level = slog.LevelDebug
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		return nil, Usage(fmt.Errorf("invalid --log-level %q: want debug, info, warn or error", o.Level))
	}
	opts := &slog.HandlerOptions{Level: level}
	var handler func(io.Writer) slog.Handler
	switch strings.ToLower(o.Format) {
	case "", "text":
		handler = func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, opts) }
	case "json":
		handler = func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, opts) }
	default:
		return nil, Usage(fmt.Errorf("invalid --log-format %q: want text or json", o.Format))
	}
	if q, ok := w.(*LogQueue); ok {
		// The queue's report of dropped lines is a line of this log, in its format.
		notice := func(dropped, total uint64) []byte {
			var line bytes.Buffer
			slog.New(handler(&line)).Warn("log lines dropped: stderr was not read fast enough", "dropped", dropped, "dropped_total", total)
			return line.Bytes()
		}
		q.notice.Store(&notice)
	}
	return slog.New(handler(w)), nil
}
