package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/graphrag/graphrag/pkg/curation"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/service"
)

// curateUsage lists the curate subcommands, each with its arguments.
const curateUsage = `usage: graphrag curate -corpus NAME [flags] COMMAND ARGS...
Curates a corpus's graph through the query API; the grapher applies each operation to
the graph as it is now and to every document published later (docs/curation.md).
Commands:
  merge NAME... INTO            fold the entities NAME... into the entity INTO
  split NAME                    take NAME back out of the merge that folded it in
  rename NAME NEW-NAME          give an entity a new name
  set-type NAME TYPE            give an entity a type
  pin NAME DESCRIPTION          make DESCRIPTION the entity's description
  delete-rel NAME NAME          delete the relationships between two entities
  add-rel SOURCE TARGET [TYPE [DESCRIPTION]]
                                add a relationship no passage states
  log                           list the operations with their state
  undo ID                       revert an operation`

// runCurate sends one curation command to the query API.
func runCurate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("curate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	api := fs.String("api", defaultQueryAPI, "query API base URL")
	var token service.Secret
	fs.Var(&token, "api-token", "bearer token for the API (write on the corpus; read for log)")
	corpus := fs.String("corpus", "", "corpus name (required)")
	asJSON := fs.Bool("json", false, "print the API's JSON answer")
	timeout := fs.Duration("timeout", time.Minute, "request timeout")
	fs.Usage = func() {
		fmt.Fprintln(stderr, curateUsage)
		fs.PrintDefaults()
	}
	if err := service.ParseFlags(fs, args, platform.EnvPrefix); err != nil {
		return err
	}
	if err := events.ValidateCorpus(*corpus); err != nil {
		return fmt.Errorf("-corpus: %w", err)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("no command given")
	}
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	base := strings.TrimRight(*api, "/") + "/v1/corpora/" + *corpus + "/curation"
	method, path := http.MethodPost, base
	var op *curation.Op
	want := func(lo, hi int, what string) error {
		if len(rest) < lo || len(rest) > hi {
			return fmt.Errorf("curate %s takes %s", cmd, what)
		}
		return nil
	}
	var err error
	switch cmd {
	case "merge":
		if err = want(2, 51, "the entities to merge, then the one to merge them into"); err == nil {
			op = &curation.Op{Action: curation.Merge, Entities: rest[:len(rest)-1], Into: rest[len(rest)-1]}
		}
	case "split":
		if err = want(1, 1, "one entity"); err == nil {
			op = &curation.Op{Action: curation.Split, Entity: rest[0]}
		}
	case "rename":
		if err = want(2, 2, "an entity and its new name"); err == nil {
			op = &curation.Op{Action: curation.Rename, Entity: rest[0], Name: rest[1]}
		}
	case "set-type":
		if err = want(2, 2, "an entity and its type"); err == nil {
			op = &curation.Op{Action: curation.SetType, Entity: rest[0], Type: rest[1]}
		}
	case "pin":
		if err = want(2, 2, "an entity and its description"); err == nil {
			op = &curation.Op{Action: curation.Pin, Entity: rest[0], Description: rest[1]}
		}
	case "delete-rel":
		if err = want(2, 2, "the two entities"); err == nil {
			op = &curation.Op{Action: curation.DeleteRelationship, Source: rest[0], Target: rest[1]}
		}
	case "add-rel":
		if err = want(2, 4, "a source, a target, and optionally a type and a description"); err == nil {
			op = &curation.Op{Action: curation.AddRelationship, Source: rest[0], Target: rest[1]}
			if len(rest) > 2 {
				op.Type = rest[2]
			}
			if len(rest) > 3 {
				op.Description = rest[3]
			}
		}
	case "log":
		err = want(0, 0, "no arguments")
		method = http.MethodGet
	case "undo":
		err = want(1, 1, "an operation id")
		method = http.MethodDelete
		if err == nil {
			path = base + "/" + url.PathEscape(rest[0])
		}
	default:
		fs.Usage()
		return fmt.Errorf("unknown curate command %q", cmd)
	}
	if err != nil {
		return err
	}
	var body io.Reader
	if op != nil {
		if err := op.Validate(); err != nil {
			return err
		}
		b, _ := json.Marshal(op)
		body = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, path, body)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token.Value() != "" {
		req.Header.Set("Authorization", "Bearer "+token.Value())
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("curate %s: %w", cmd, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("curate %s: reading the answer: %w", cmd, err)
	}
	if resp.StatusCode >= 300 {
		var e struct{ Error string }
		if json.Unmarshal(out, &e) == nil && e.Error != "" {
			return fmt.Errorf("curate %s: %s (HTTP %d)", cmd, e.Error, resp.StatusCode)
		}
		return fmt.Errorf("curate %s: HTTP %d", cmd, resp.StatusCode)
	}
	if *asJSON {
		_, err := stdout.Write(out)
		return err
	}
	if cmd == "log" {
		var log struct{ Operations []curation.Report }
		if err := json.Unmarshal(out, &log); err != nil {
			return fmt.Errorf("curate log: %w", err)
		}
		printCurationLog(stdout, log.Operations)
		return nil
	}
	var e curation.Entry
	if err := json.Unmarshal(out, &e); err != nil {
		return fmt.Errorf("curate %s: %w", cmd, err)
	}
	fmt.Fprintf(stdout, "operation %s accepted: %s (the grapher applies it; see graphrag curate -corpus %s log)\n", e.ID, describeOp(e.Op), *corpus)
	return nil
}

// describeOp says what an operation does, in a line.
func describeOp(o curation.Op) string {
	q := strconv.Quote
	switch o.Action {
	case curation.Merge:
		names := make([]string, len(o.Entities))
		for i, n := range o.Entities {
			names[i] = q(n)
		}
		return "merge " + strings.Join(names, ", ") + " into " + q(o.Into)
	case curation.Split:
		return "split " + q(o.Entity) + " off"
	case curation.Rename:
		return "rename " + q(o.Entity) + " to " + q(o.Name)
	case curation.SetType:
		return "set the type of " + q(o.Entity) + " to " + q(o.Type)
	case curation.Pin:
		return "pin the description of " + q(o.Entity)
	case curation.DeleteRelationship:
		return "delete the relationships between " + q(o.Source) + " and " + q(o.Target)
	case curation.AddRelationship:
		return "add a relationship " + q(o.Source) + " -> " + q(o.Target)
	case curation.Undo:
		return "undo " + o.Undoes
	}
	return string(o.Action)
}

func printCurationLog(w io.Writer, ops []curation.Report) {
	if len(ops) == 0 {
		fmt.Fprintln(w, "no curation operations")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tOPERATION\tNOTE")
	for _, r := range ops {
		note := r.Reason
		if r.UndoneBy != "" {
			note = "undone by " + r.UndoneBy
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.State, describeOp(r.Op), note)
	}
	_ = tw.Flush()
}
