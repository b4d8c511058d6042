package program

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/forge-lsp/forge-lsp/engine/luatok"
	"github.com/forge-lsp/forge-lsp/engine/parse"
)

// TestChunkLexedOnce: building a prompt's model and its symbols index and
// reading every chunk's tokens lexes each chunk once; after an edit that
// moves every chunk and changes one, only the changed chunk is lexed again.
func TestChunkLexedOnce(t *testing.T) {
	// The parser's chunk cache is process-wide: a fresh text per run keeps
	// earlier runs (-count) from having lexed these chunks.
	nonce := fmt.Sprint(time.Now().UnixNano())
	text := "---\nname: t\ndescription: d\npromptforge: 1\n---\n\n# T\n\n" +
		"```lua\nlocal n = \"" + nonce + "\"\ntools.bind(\"s\", \"d\")\n```\n\n" +
		"## A\n\nProse.\n\n```lua\nlocal a = 1 -- " + nonce + "\nif a then jump(\"## B\") end\n```\n\n" +
		"## B\n\n```lua\nvar.b = \"" + nonce + "\"\n```\n"
	use := func(text string) int64 {
		before := lexes.Load()
		pr := parse.Parse("lexonce.md", []byte(text))
		p := Build(pr)
		ix := SymbolsOf(pr)
		if len(p.Chunks) != 3 || len(ix.Chunks) != 3 {
			t.Fatalf("%d chunks in the model, %d in the index; want 3", len(p.Chunks), len(ix.Chunks))
		}
		for _, c := range ix.Chunks {
			if len(c.Tokens()) == 0 || len(Tokens(c.Chunk, pr.File)) == 0 {
				t.Fatalf("chunk %s: no tokens", c.Chunk.Label)
			}
		}
		return lexes.Load() - before
	}
	if n := use(text); n != 3 {
		t.Fatalf("first build lexed %d chunks, want 3 (one per chunk)", n)
	}
	if n := use(text); n != 0 {
		t.Fatalf("a second parse of the same text lexed %d chunks, want 0", n)
	}
	edited := strings.Replace(text, "# T\n", "# T\n\nMore\nprose.\n", 1)
	edited = strings.Replace(edited, "local a = 1", "local a = 2", 1)
	if n := use(edited); n != 1 {
		t.Fatalf("after an edit that moves every chunk and changes one, %d chunks lexed, want 1", n)
	}
	if n := use(strings.ReplaceAll(edited, "\n", "\r\n")); n != 3 {
		t.Fatalf("with CRLF line breaks every chunk's offsets change: %d chunks lexed, want 3", n)
	}
}

// TestPackedTokens: a chunk's packed tokens give back exactly what the
// lexer returns at the chunk's place (values aliasing the text, decoded
// strings, empty strings, long brackets, an unterminated string), with LF
// and CRLF line breaks.
func TestPackedTokens(t *testing.T) {
	lua := "local s = \"esc\\\"aped\\n\" .. 'plain' .. \"\" -- comment\n" +
		"local l = [==[\nlong ]] string\n]==] --[[ block\ncomment ]] x = 0x1F + 1.5e3\n" +
		"t[#t] = a ~= b and c:d(e) or ...\n" +
		"print(\"unterminated\n"
	text := "# T\n\nProse.\n\n```lua\n" + lua + "```\n"
	for _, variant := range []string{text, strings.ReplaceAll(text, "\n", "\r\n")} {
		pr := parse.Parse("packed.md", []byte(variant))
		ix := SymbolsOf(pr)
		if len(ix.Chunks) != 1 {
			t.Fatalf("%d chunks", len(ix.Chunks))
		}
		c := ix.Chunks[0].Chunk
		want := luatok.AppendLex(nil, c.Source, c.FirstLine, pr.File.LineStart)
		if got := ix.Chunks[0].Tokens(); !reflect.DeepEqual(got, want) {
			t.Fatalf("packed tokens differ from the lexer's:\n got %+v\nwant %+v", got, want)
		}
		if len(want) < 30 {
			t.Fatalf("only %d tokens", len(want))
		}
	}
	if n := unsafe.Sizeof(packedToken{}); n > 24 {
		t.Fatalf("packedToken is %d bytes, want at most 24", n)
	}
}
