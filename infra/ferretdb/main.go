// Command ferretdb runs FerretDB's embeddable package with the SQLite backend for docent's local stack.
// A main of our own avoids the upstream command's build-time version file, which module builds lack.
package main

import (
	"context"
	"flag"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on")
	sqliteURL := flag.String("sqlite-url", "file:data/", "SQLite URI of the data directory (with a trailing slash)")
	flag.Parse()

	level := slog.LevelWarn
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: *sqliteURL,
	})
	if err != nil {
		log.Fatal(err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Printf("ferretdb listening on %s (sqlite %s)", *listen, *sqliteURL)
	if err := f.Run(ctx); err != nil && ctx.Err() == nil {
		log.Fatal(err)
	}
}
