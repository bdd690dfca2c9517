// Package pyjson writes JSON the way AIPerf's Python writes it (orjson with OPT_INDENT_2):
// keys in the order they were added (never map iteration order), strings escaped by
// jsonwire's rule (encoding/json's, HTML escaping off) and floats in Python's repr form, so
// llmbench's exports read like AIPerf's byte for byte. analyze's per-request records and
// every export writer share this one definition of a Python float.
//
// It imports only internal/jsonwire and the standard library: every package that writes an
// export may import it.
package pyjson
