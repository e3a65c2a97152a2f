//go:build e2e

package analytics

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// trino is a client of Trino's HTTP protocol: POST the statement to
// /v1/statement, then GET each nextUri until there is none, collecting the
// columns and rows on the way. Values arrive as JSON: numbers, strings,
// timestamps as text ("2026-11-28 12:00:00.000001 UTC"), varbinary as
// base64.
type trino struct {
	url     string
	catalog string
	schema  string
	// session properties, sent as X-Trino-Session
	session map[string]string
	http    *http.Client
}

type trinoColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

type trinoError struct {
	Message   string `json:"message"`
	ErrorName string `json:"errorName"`
	ErrorType string `json:"errorType"`
}

type trinoPage struct {
	ID      string          `json:"id"`
	NextURI string          `json:"nextUri"`
	Columns []trinoColumn   `json:"columns"`
	Data    [][]any         `json:"data"`
	Error   *trinoError     `json:"error"`
	Stats   json.RawMessage `json:"stats"`
	// UpdateCount is set by INSERT, DELETE and the like.
	UpdateCount *int64 `json:"updateCount"`
}

// result is one statement's answer.
type result struct {
	Columns     []trinoColumn
	Rows        [][]any
	UpdateCount *int64
	QueryID     string
}

func newTrino(url, catalog, schema string) *trino {
	return &trino{url: url, catalog: catalog, schema: schema, session: map[string]string{}, http: &http.Client{Timeout: 2 * time.Minute}}
}

// with returns a copy of c that also sends the session property k=v.
func (c *trino) with(k, v string) *trino {
	d := *c
	d.session = map[string]string{}
	for a, b := range c.session {
		d.session[a] = b
	}
	d.session[k] = v
	return &d
}

// query runs one statement to the end.
func (c *trino) query(ctx context.Context, sql string) (*result, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+"/v1/statement", strings.NewReader(sql))
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Trino-User", "haade")
	req.Header.Set("X-Trino-Source", "haade-analytics-test")
	req.Header.Set("X-Trino-Catalog", c.catalog)
	req.Header.Set("X-Trino-Schema", c.schema)
	// Every timestamp with time zone comes back in UTC.
	req.Header.Set("X-Trino-Time-Zone", "UTC")
	// Without this capability the server rounds every timestamp to
	// milliseconds and reports the type without its precision, as it does
	// for clients older than parametric datetimes.
	req.Header.Set("X-Trino-Client-Capabilities", "PARAMETRIC_DATETIME")
	for k, v := range c.session {
		req.Header.Add("X-Trino-Session", k+"="+v)
	}
	res := &result{}
	for {
		page, err := c.do(req)
		if err != nil {
			return nil, fmt.Errorf("trino: %s: %w", oneLine(sql), err)
		}
		if page.Error != nil {
			return nil, fmt.Errorf("trino: %s: %s (%s)%s", oneLine(sql), page.Error.Message, page.Error.ErrorName, hint(page.Error.Message))
		}
		res.QueryID = page.ID
		if page.Columns != nil {
			res.Columns = page.Columns
		}
		res.Rows = append(res.Rows, page.Data...)
		if page.UpdateCount != nil {
			res.UpdateCount = page.UpdateCount
		}
		if page.NextURI == "" {
			return res, nil
		}
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, page.NextURI, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("X-Trino-User", "haade")
	}
}

func (c *trino) do(req *http.Request) (*trinoPage, error) {
	for attempt := 0; ; attempt++ {
		resp, err := c.http.Do(req)
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		// 502, 503 and 504 mean: ask again (the protocol's rule).
		if (resp.StatusCode == 502 || resp.StatusCode == 503 || resp.StatusCode == 504) && attempt < 20 {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("HTTP %s: %s", resp.Status, bytes.TrimSpace(b))
		}
		var p trinoPage
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("decoding %s: %v", b, err)
		}
		return &p, nil
	}
}

// hint explains the error Trino's JDBC catalog gives before any pipeline
// has committed into that database.
func hint(msg string) string {
	if strings.Contains(msg, "iceberg_tables") || strings.Contains(msg, "Cannot check and eventually update SQL schema") {
		return "; Trino's JDBC catalog never creates the catalog tables: run bronze (or silver, gold) once against this database first"
	}
	return ""
}

func oneLine(sql string) string {
	s := strings.Join(strings.Fields(sql), " ")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

// scalar runs a query that returns one value and gives it as text.
func (c *trino) scalar(ctx context.Context, sql string) (string, error) {
	r, err := c.query(ctx, sql)
	if err != nil {
		return "", err
	}
	if len(r.Rows) != 1 || len(r.Rows[0]) != 1 {
		return "", fmt.Errorf("trino: %s: want one value, got %d rows", oneLine(sql), len(r.Rows))
	}
	return fmt.Sprint(r.Rows[0][0]), nil
}

// count runs SELECT count(*) FROM from.
func (c *trino) count(ctx context.Context, from string) (int64, error) {
	s, err := c.scalar(ctx, "SELECT count(*) FROM "+from)
	if err != nil {
		return 0, err
	}
	var n int64
	_, err = fmt.Sscan(s, &n)
	return n, err
}
