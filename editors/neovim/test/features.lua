-- Headless test of incremental sync, semantic tokens, inlay hints and formatting
-- between Neovim's LSP client and the real forge-lsp binary.
--
--   FORGE_LSP_BIN=/path/to/forge-lsp \
--   nvim --headless -u NONE -i NONE --cmd "set rtp^=editors/neovim" \
--        -c "luafile editors/neovim/test/features.lua"
--
-- Neovim edits the buffer (multi-byte text, an emoji before the edit) and
-- sends its own incremental didChange events; the test then checks, by
-- UTF-16 columns, that the server's diagnostics and semantic tokens land
-- on the buffer's text. Neovim 0.7 renders neither semantic tokens nor
-- inlay hints, so those are requested directly.
--
-- Prints one line per test and "N passed, N failed"; exits non-zero on failure.

local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/harness.lua")
local test, check, wait = h.test, h.check, h.wait
local bin = h.need_bin()

vim.cmd("filetype on")
vim.o.swapfile = false
vim.o.shortmess = vim.o.shortmess .. "A"
vim.notify = function() end

local forge = require("forge")
forge.setup({ cmd = { bin, "serve" } })

local dir = vim.fn.tempname()
vim.fn.mkdir(dir, "p")
local path = dir .. "/features.md"
-- The fixture is shared with the VS Code test (editors/vscode/test/features.test.ts).
local here = debug.getinfo(1, "S").source:sub(2)
vim.fn.writefile(vim.fn.readfile(vim.fn.fnamemodify(here, ":p:h:h:h") .. "/testdata/features.md"), path)

vim.cmd("edit " .. vim.fn.fnameescape(path))
local buf = vim.api.nvim_get_current_buf()
local uri = vim.uri_from_bufnr(buf)

local function request(method, params)
  local res = vim.lsp.buf_request_sync(buf, method, params, 10000)
  check(res, "no answer to %s", method)
  for _, r in pairs(res) do
    check(not r.err, "%s: %s", method, vim.inspect(r.err))
    return r.result
  end
end

-- text of a 0-based line between two UTF-16 columns.
local function slice(line, c1, c2)
  local text = vim.api.nvim_buf_get_lines(buf, line, line + 1, false)[1]
  return text:sub(vim.str_byteindex(text, c1, true) + 1, vim.str_byteindex(text, c2, true))
end

local legend

local function tokens()
  local res = request("textDocument/semanticTokens/full", { textDocument = { uri = uri } })
  local list, line, char = {}, 0, 0
  for i = 1, #res.data, 5 do
    local d = res.data
    if d[i] > 0 then
      line, char = line + d[i], d[i + 1]
    else
      char = char + d[i + 1]
    end
    list[#list + 1] = { line = line, char = char, length = d[i + 2], type = legend.tokenTypes[d[i + 3] + 1] }
  end
  return list
end

-- vim.str_utfindex returns the UTF-32 and the UTF-16 index; LSP columns
-- are the second.
local function find_line(needle)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if l:find(needle, 1, true) then
      return i - 1, l
    end
  end
  error("no line with " .. needle)
end

test("the client attaches and uses incremental sync", function()
  wait(15000, function()
    return forge.client(buf) ~= nil
  end, "the client")
  local client = forge.client(buf)
  wait(10000, function()
    return client.initialized or client.server_capabilities ~= nil
  end, "initialize")
  local caps = client.server_capabilities or {}
  local sync = caps.textDocumentSync
  check(type(sync) == "table" and sync.change == 2, "textDocumentSync %s", vim.inspect(sync))
  legend = caps.semanticTokensProvider and caps.semanticTokensProvider.legend
  check(legend and vim.tbl_contains(legend.tokenTypes, "keyword"), "legend %s", vim.inspect(caps.semanticTokensProvider))
  check(caps.inlayHintProvider, "no inlayHintProvider")
end)

test("edits over multi-byte text reach the server exactly", function()
  -- Neovim sends these as ranged changes in UTF-16 columns.
  local line, text = find_line("héllo")
  local s = text:find("héllo", 1, true) - 1
  vim.api.nvim_buf_set_text(buf, line, s, line, s + #"héllo", { "hello 🎉" })
  local l2 = find_line("log(note)")
  vim.api.nvim_buf_set_lines(buf, l2, l2 + 1, false, { "local unused = note" })
  wait(15000, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.code == "unused-local" then
        return true
      end
    end
    return false
  end, "the unused-local warning of the edited text")
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == "unused-local" then
      check(d.lnum == l2, "warning on line %d, want %d", d.lnum, l2)
    end
  end
  local strings, keywords = {}, {}
  for _, t in ipairs(tokens()) do
    local s2 = slice(t.line, t.char, t.char + t.length)
    if t.type == "string" then
      strings[#strings + 1] = s2
    elseif t.type == "keyword" then
      keywords[#keywords + 1] = s2
    end
  end
  check(vim.tbl_contains(strings, '"😀 hello 🎉"'), "strings %s", vim.inspect(strings))
  check(#keywords >= 2, "keywords %s", vim.inspect(keywords))
  for _, k in ipairs(keywords) do
    check(k == "local", "keyword token over %q", k)
  end
  -- Undo the second edit: the warning goes away.
  vim.api.nvim_buf_set_lines(buf, l2, l2 + 1, false, { "log(note)" })
  wait(15000, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.code == "unused-local" then
        return false
      end
    end
    return true
  end, "the warning to clear")
end)

test("semantic tokens: namespaces, aliases, placeholders; range agrees with full", function()
  local all = tokens()
  local function at(needle, want)
    local line, text = find_line(needle)
    local col = select(2, vim.str_utfindex(text, text:find(needle, 1, true) - 1))
    for _, t in ipairs(all) do
      if t.line == line and t.char == col then
        check(t.type == want, "%s: type %s, want %s", needle, t.type, want)
        return
      end
    end
    error("no token at " .. needle)
  end
  at("models.default", "namespace")
  at('"search", "web', "enumMember")
  at("args }}", "variable")
  local line = find_line("local note")
  local ranged = request("textDocument/semanticTokens/range", {
    textDocument = { uri = uri },
    range = { start = { line = line, character = 0 }, ["end"] = { line = line, character = 1000 } },
  })
  local n = 0
  for _, t in ipairs(all) do
    if t.line == line then
      n = n + 1
    end
  end
  check(#ranged.data == 5 * n, "range gave %d tokens, the full result has %d on the line", #ranged.data / 5, n)
end)

test("inlay hints: the resolved tool and the prose block's token estimate", function()
  local hints = request("textDocument/inlayHint", {
    textDocument = { uri = uri },
    range = { start = { line = 0, character = 0 }, ["end"] = { line = vim.api.nvim_buf_line_count(buf), character = 0 } },
  })
  local bind_line, bind = find_line('tools.bind("search"')
  local prose_line, prose = find_line("Find news about")
  local tool, estimate = false, false
  for _, h in ipairs(hints) do
    if h.position.line == bind_line and h.position.character == select(2, vim.str_utfindex(bind)) and h.label == "→ web_search" then
      tool = true
    end
    if h.position.line == prose_line and h.position.character == select(2, vim.str_utfindex(prose)) and h.label:find("^≈ %d+ tokens") then
      estimate = true
    end
  end
  check(tool, "no → web_search hint: %s", vim.inspect(hints))
  check(estimate, "no token estimate at the end of the prose: %s", vim.inspect(hints))
end)

test("formatting: the buffer is formatted through the client, then unchanged", function()
  local client = forge.client(buf)
  check(client.server_capabilities.documentFormattingProvider, "no documentFormattingProvider")
  local l = find_line("log(note)")
  vim.api.nvim_buf_set_lines(buf, l, l + 1, false, { "if note then log('x') end" })
  -- vim.lsp.buf.format is Neovim 0.8's; 0.7 has formatting_sync.
  local function format()
    if vim.lsp.buf.format then
      vim.lsp.buf.format({ bufnr = buf, timeout_ms = 10000 })
    else
      vim.lsp.buf.formatting_sync(nil, 10000)
    end
  end
  format()
  local lines = vim.api.nvim_buf_get_lines(buf, l, l + 3, false)
  check(vim.deep_equal(lines, { "if note then", '\tlog("x")', "end" }), "formatted lines %s", vim.inspect(lines))
  local before = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  format()
  check(table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") == before, "a second format changed the buffer")
end)

h.finish(function()
  vim.fn.delete(dir, "rf")
end)
