package run

// The JSON encoder of value trees (convert.go): compact, objects with
// sorted keys, numbers and strings written as serde_json writes them, so
// var data and tool arguments render as upstream renders them.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// renderJSON writes v as compact JSON (objects with sorted keys).
func renderJSON(sb *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		sb.WriteString("null")
	case bool:
		sb.WriteString(strconv.FormatBool(x))
	case float64:
		sb.WriteString(jsonNumber(x))
	case string:
		jsonString(sb, x)
	case *node:
		if x.isObj || x.arr == nil {
			sb.WriteByte('{')
			for i, k := range x.keys() {
				if i > 0 {
					sb.WriteByte(',')
				}
				jsonString(sb, k)
				sb.WriteByte(':')
				renderJSON(sb, x.obj[k])
			}
			sb.WriteByte('}')
			return
		}
		sb.WriteByte('[')
		for i, e := range x.arr {
			if i > 0 {
				sb.WriteByte(',')
			}
			renderJSON(sb, e)
		}
		sb.WriteByte(']')
	}
}

func jsonNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e17 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// jsonString writes s as a JSON string the way serde_json does: only ",
// \ and control characters are escaped.
func jsonString(sb *strings.Builder, s string) {
	sb.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		case '\b':
			sb.WriteString(`\b`)
		case '\f':
			sb.WriteString(`\f`)
		default:
			if c < 0x20 {
				fmt.Fprintf(sb, `\u%04x`, c)
			} else {
				sb.WriteByte(c)
			}
		}
	}
	sb.WriteByte('"')
}

// compactJSON renders v as compact JSON.
func compactJSON(v any) string {
	var sb strings.Builder
	renderJSON(&sb, v)
	return sb.String()
}
