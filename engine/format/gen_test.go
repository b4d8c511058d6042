package format

import (
	"fmt"
	"strings"
)

// genPrompt builds a realistic prompt of about n lines, the shape of the
// repository's benchmark prompt: a tool and a loop per step, prose with
// placeholders, an epilog chunk. It also returns the prompt's Lua alone.
func genPrompt(n int) (prompt, lua string) {
	out := []string{"---", "name: generated", "description: generated benchmark prompt", "promptforge: 1", "---", "",
		"# Generated", "", "```lua", `models.default("writer", "a careful analysis model")`,
		`tools.bind("search", "web search capability", "Search the web for current information")`, "```", ""}
	var code []string
	for i := 1; len(out) < n; i++ {
		body := []string{
			fmt.Sprintf(`tools.add_local("note%d", "Record note number %d in the store", {`, i, i),
			`    path = {"string", "Store path"},`,
			`    text = {"string", "Text to append"},`,
			"}, function(args)",
			`    store.append(args.path, args.text .. "\n")`,
			fmt.Sprintf(`    return "noted %d"`, i),
			"end)",
			"local total = 0",
			"for k = 1, 10 do",
			fmt.Sprintf("    total = total + k * %d", i),
			"end",
			fmt.Sprintf("var.total%d = total", i),
		}
		epi := []string{
			`if reply and reply:find("STOP") then`,
			fmt.Sprintf(`    return "stopped at %d"`, i),
			"end",
			fmt.Sprintf(`store.write("out/%d.txt", reply or "")`, i),
		}
		out = append(out, fmt.Sprintf("## Step %d", i), "", "```lua")
		out = append(out, body...)
		out = append(out, "```", "",
			fmt.Sprintf("Summarise step %d for {{ args }} using the running total {{ var.total%d }}.", i, i),
			"Keep it short and factual, and call the note tool once.", "", "```lua")
		out = append(out, epi...)
		out = append(out, "```", "")
		code = append(code, body...)
		code = append(code, epi...)
	}
	return strings.Join(out, "\n") + "\n", strings.Join(code, "\n") + "\n"
}
