package export

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"

	"github.com/llmbench/llmbench/analyze"
)

// SelectionsDir is the folder of a run directory that holds the exports of its selected
// analyses (--where, --group-by, --metric without --output-dir), one subfolder each
// (SelectionDir): they never replace the run's own exports and report.html.
const SelectionsDir = "selections"

// selectionText is the analysis's selection as the user wrote it, one clause per flag
// ("where isl > 4096", "group-by turn", "metric third_event_ms = chunks_ms[2]"), "" when
// the analysis is over every request with the built-in metrics only.
func selectionText(o analyze.Options) []string {
	var parts []string
	if o.Where != nil {
		parts = append(parts, "where "+o.Where.Expr)
	}
	if o.GroupBy != nil {
		parts = append(parts, "group-by "+o.GroupBy.Expr)
	}
	if o.Metrics != nil {
		for _, d := range o.Metrics.Metrics() {
			if d.User {
				parts = append(parts, "metric "+d.Tag+" = "+d.Expression)
			}
		}
	}
	return parts
}

// SelectionDir is where an analysis of runDir with the selection of o (--where, --group-by,
// user metrics) writes its exports when no --output-dir is given:
// RUN_DIR/selections/<slug>, the slug naming what was selected in words a file name can
// hold, then 8 hex digits of the SHA-256 of the selection as written, so two different
// selections never share a folder and the same one always finds its own again. "" when the
// analysis selects nothing (its exports are the run's own).
func SelectionDir(runDir string, o analyze.Options) string {
	parts := selectionText(o)
	if len(parts) == 0 {
		return ""
	}
	var words []string
	if o.Where != nil {
		words = append(words, "where_"+slugWords(o.Where.Expr))
	}
	if o.GroupBy != nil {
		words = append(words, "by_"+slugWords(o.GroupBy.Expr))
	}
	if o.Metrics != nil {
		var names []string
		for _, d := range o.Metrics.Metrics() {
			if d.User {
				names = append(names, d.Tag)
			}
		}
		if len(names) > 0 {
			words = append(words, "metric_"+strings.Join(names, "_"))
		}
	}
	slug := strings.Join(words, "-")
	if len(slug) > maxSlug {
		slug = strings.TrimRight(slug[:maxSlug], "_-")
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\n")))
	return filepath.Join(runDir, SelectionsDir, slug+"-"+hex.EncodeToString(sum[:4]))
}

// maxSlug bounds the readable part of a selection folder's name (file systems allow 255).
const maxSlug = 80

// slugOperators are CEL's operators in words, longest first.
var slugOperators = strings.NewReplacer(">=", " ge ", "<=", " le ", "==", " eq ", "!=", " ne ",
	"&&", " and ", "||", " or ", ">", " gt ", "<", " lt ", "!", " not ", "+", " plus ", "-", " minus ",
	"*", " times ", "/", " over ", "%", " mod ")

// slugWords is expr in lower-case letters, digits and underscores: operators in words, every
// other run of characters one underscore.
func slugWords(expr string) string {
	s := slugOperators.Replace(strings.ToLower(expr))
	var b strings.Builder
	under := false
	for _, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.'
		if !ok {
			under = b.Len() > 0
			continue
		}
		if under {
			b.WriteByte('_')
			under = false
		}
		b.WriteRune(c)
	}
	return b.String()
}
