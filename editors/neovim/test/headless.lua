-- Headless test of forge.nvim against the real forge-lsp binary.
--
--   FORGE_LSP_BIN=/path/to/forge-lsp FORGE_CASSETTE=/path/to/greet.jsonl \
--   nvim --headless -u NONE -i NONE --cmd "set rtp^=editors/neovim" \
--        -c "luafile editors/neovim/test/headless.lua"   (.ci/editors.sh wraps it in pcall)
--
-- Prints one line per test and "N passed, N failed"; exits non-zero on failure.

local bin = os.getenv("FORGE_LSP_BIN")
local cassette = os.getenv("FORGE_CASSETTE")
local here = debug.getinfo(1, "S").source:sub(2)
local testdata = vim.fn.fnamemodify(here, ":p:h:h:h") .. "/testdata"

vim.cmd("filetype on")
vim.o.swapfile = false
vim.o.shortmess = vim.o.shortmess .. "A"

local out = io.stdout
local passed, failed = 0, 0

local function say(s)
  out:write(s .. "\n")
  out:flush()
end

-- Every vim.notify call is recorded so the tests can assert user messages.
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level or vim.log.levels.INFO })
end

local function test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    passed = passed + 1
    say("ok - " .. name)
  else
    failed = failed + 1
    say("not ok - " .. name)
    for line in tostring(err):gmatch("[^\n]+") do
      say("    " .. line)
    end
  end
end

local function check(cond, msg, ...)
  if not cond then
    error(string.format(msg, ...), 2)
  end
end

local function wait(ms, cond, what)
  if not vim.wait(ms, cond, 20) then
    error("timed out after " .. ms .. " ms waiting for " .. what, 2)
  end
end

local function last_note(pattern)
  for i = #notes, 1, -1 do
    if notes[i].msg:find(pattern) then
      return notes[i]
    end
  end
  return nil
end

local forge = require("forge")

local function edit(name)
  vim.cmd("silent! %bwipeout!")
  vim.cmd("edit " .. vim.fn.fnameescape(testdata .. "/" .. name))
  return vim.api.nvim_get_current_buf()
end

local function run_buffer_text()
  local b = vim.fn.bufnr("forge://run")
  check(b ~= -1, "no forge://run buffer")
  return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
end

-- wait_run waits for the run started by the last command to finish. It
-- fails at once when the command only produced a warning or an error.
local function wait_run(what, notes_before)
  wait(30000, function()
    if forge.last_run and forge.last_run.status ~= "running" then
      return true
    end
    for i = notes_before + 1, #notes do
      if notes[i].level >= vim.log.levels.WARN then
        return true
      end
    end
    return false
  end, what)
  if not forge.last_run or forge.last_run.status == "running" then
    error("no run for " .. what .. "; message: " .. notes[#notes].msg, 2)
  end
  return forge.last_run
end

if not bin or bin == "" then
  say("not ok - FORGE_LSP_BIN is not set")
  say("0 passed, 1 failed")
  vim.cmd("cquit 1")
end

local v = vim.version()
say(string.format("# Neovim %d.%d.%d", v.major, v.minor, v.patch))

test("is_prompt reads only the frontmatter", function()
  local cases = {
    { { "---", "name: x", "promptforge: 1", "---", "# T" }, true },
    { { "\239\187\191---\r", "promptforge: 1\r", "---\r" }, true },
    { { "---", "name: x", "---", "promptforge: 1" }, false },
    { { "# T", "", "promptforge: 1" }, false },
    { { "" }, false },
  }
  for i, c in ipairs(cases) do
    local b = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(b, 0, -1, false, c[1])
    check(forge.is_prompt(b) == c[2], "case %d: want %s", i, tostring(c[2]))
    vim.api.nvim_buf_delete(b, { force = true })
  end
end)

test("pick_section: by cursor line and by name", function()
  local function lens(line, cmd, section)
    return { range = { start = { line = line } }, command = { title = "▶", command = cmd, arguments = { { uri = "file:///p.md", section = section } } } }
  end
  local lenses = { lens(2, "forge.runPrompt"), lens(8, "forge.runSection", "## A"), lens(12, "forge.runSection", "### A1"), lens(20, "forge.runSection", "## B") }
  check(forge.pick_section(lenses, nil, 5) == nil, "above the first section")
  check(forge.pick_section(lenses, "", 15).section == "### A1", "innermost section")
  check(forge.pick_section(lenses, nil, 99).section == "## B", "last section")
  check(forge.pick_section(lenses, "a1", 0).section == "### A1", "bare, case-insensitive name")
  check(forge.pick_section(lenses, "## B", 0).section == "## B", "full address")
  check(forge.pick_section(lenses, "Nope", 0) == nil, "unknown name")
end)

test("check_cmd explains a missing or non-executable server", function()
  check(forge.check_cmd({ "sh" }) == nil, "sh should be executable")
  check(forge.check_cmd({ "/nonexistent/forge-lsp" }):find("was not found"), "missing")
  local f = vim.fn.tempname()
  vim.fn.writefile({ "#!/bin/sh" }, f)
  check(forge.check_cmd({ f }):find("not executable"), "non-executable file")
  check(forge.check_cmd({}):find("no server command"), "empty cmd")
end)

test("a missing server binary gives a clear error", function()
  forge.setup({ cmd = { "/nonexistent/bin/forge-lsp", "serve" } })
  local buf = edit("pure.md")
  check(forge.client(buf) == nil, "a client attached although the binary does not exist")
  local n = last_note("was not found")
  check(n ~= nil, "no message about the missing binary; messages: %s", vim.inspect(notes))
  check(n.level == vim.log.levels.ERROR, "the message is not an error")
  check(n.msg:find("/nonexistent/bin/forge-lsp", 1, true), "the message does not name the path: %s", n.msg)
  check(n.msg:find("setup", 1, true), "the message does not say how to fix it: %s", n.msg)
  -- :ForgeRun repeats the reason instead of doing nothing.
  local before = #notes
  vim.cmd("ForgeRun")
  check(#notes > before and notes[#notes].msg:find("was not found"), "ForgeRun was silent: %s", vim.inspect(notes[#notes]))
end)

forge.setup({ cmd = { bin, "serve" }, replay = cassette })

test("plain Markdown does not start the server", function()
  local buf = edit("plain.md")
  check(vim.bo[buf].filetype == "markdown", "filetype is %q", vim.bo[buf].filetype)
  check(not forge.is_prompt(buf), "plain.md detected as a prompt")
  vim.wait(300)
  check(forge.client(buf) == nil, "forge-lsp attached to plain Markdown")
end)

test("diagnostics of a prompt with known problems: codes and lines", function()
  local buf = edit("problems.md")
  check(forge.is_prompt(buf), "problems.md not detected as a prompt")
  wait(15000, function()
    return forge.client(buf) ~= nil and #vim.diagnostic.get(buf) > 0
  end, "diagnostics")
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    found[#found + 1] = string.format("%s@%d", tostring(d.code), d.lnum + 1)
  end
  for _, want in ipairs({ "upstream-spelling@10", "lua-syntax@16" }) do
    check(vim.tbl_contains(found, want), "want %s among %s", want, table.concat(found, ", "))
  end
end)

test("hover on a Lua API call", function()
  local buf = vim.api.nvim_get_current_buf()
  local res = vim.lsp.buf_request_sync(buf, "textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = 9, character = 7 },
  }, 10000)
  check(res, "no hover answer")
  local text = ""
  for _, r in pairs(res) do
    check(not r.err, "hover error: %s", vim.inspect(r.err))
    if r.result and r.result.contents then
      local c = r.result.contents
      text = text .. (type(c) == "string" and c or c.value or vim.inspect(c))
    end
  end
  check(text:find("tools%.need") or text:find("tools%.bind"), "hover text does not document tools.need: %q", text)
end)

test(":ForgeRun runs the section under the cursor (no model)", function()
  local buf = edit("pure.md")
  wait(15000, function()
    return forge.client(buf) ~= nil
  end, "the client to attach")
  vim.api.nvim_win_set_cursor(0, { 12, 0 })
  forge.last_run = nil
  local n = #notes
  vim.cmd("ForgeRun")
  local run = wait_run("the run of ## Answer", n)
  check(run.status == "done", "run status %s (%s)", run.status, tostring(run.error))
  check(run.args.section == "## Answer", "ran %s", tostring(run.args.section))
  check(run.result == "ok", "result %q", tostring(run.result))
  local text = run_buffer_text()
  check(text:find("▶ Run ## Answer", 1, true), "run buffer lacks the header:\n%s", text)
  check(text:find("\nok$"), "run buffer lacks the result:\n%s", text)
  check(vim.api.nvim_get_current_buf() == buf, "focus left the prompt")
end)

test(":ForgeRun <name> runs the named section of the unsaved buffer", function()
  local buf = vim.api.nvim_get_current_buf()
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  for i, l in ipairs(lines) do
    lines[i] = l:gsub('string.upper%("forge"%)', 'string.upper("nvim")')
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  forge.last_run = nil
  local n = #notes
  vim.cmd("ForgeRun Shout")
  local run = wait_run("the run of ## Shout", n)
  check(run.status == "done", "run status %s (%s)", run.status, tostring(run.error))
  check(run.result == "NVIM", "result %q", tostring(run.result))
  vim.cmd("ForgeRun Nope")
  wait(10000, function()
    return last_note('no section "Nope"') ~= nil
  end, "a message about the unknown section")
  local n = last_note('no section "Nope"')
  check(n.level == vim.log.levels.ERROR and n.msg:find("## Answer, ## Shout", 1, true), "message %q does not list the sections", n.msg)
end)

test(":ForgeCancel stops a run that would never end", function()
  local buf = edit("spin.md")
  wait(15000, function()
    return forge.client(buf) ~= nil
  end, "the client to attach")
  forge.last_run = nil
  vim.cmd("ForgeRun Forever")
  wait(10000, function()
    return forge.last_run and forge.last_run.progress and #forge.last_run.progress > 0
  end, "the run to begin")
  local run = forge.last_run
  vim.cmd("ForgeCancel")
  check(run.status == "cancelled", "status %s right after :ForgeCancel", run.status)
  wait(10000, function()
    return run.finished
  end, "the server to answer the cancelled request")
  check(run.status == "cancelled", "status %s after the answer", run.status)
  check(run_buffer_text():find("■ Run cancelled.", 1, true), "run buffer:\n%s", run_buffer_text())
  -- The server still answers.
  local res = vim.lsp.buf_request_sync(buf, "textDocument/codeLens", { textDocument = { uri = vim.uri_from_bufnr(buf) } }, 5000)
  local n = 0
  for _, r in pairs(res or {}) do
    n = n + #(r.result or {})
  end
  check(n == 2, "%d code lenses after the cancel", n)
end)

test(":ForgeRun with a replay cassette (model prose)", function()
  check(cassette and vim.fn.filereadable(cassette) == 1, "FORGE_CASSETTE (%s) is not a readable cassette", tostring(cassette))
  local buf = edit("model.md")
  wait(15000, function()
    return forge.client(buf) ~= nil
  end, "the client to attach")
  -- The cassette was recorded with the input "Ada"; the section reads {{ args }}.
  forge.last_run = nil
  local n = #notes
  vim.cmd("ForgeRun Greet -- Ada")
  local run = wait_run("the replayed run", n)
  check(run.status == "done", "run status %s (%s)", run.status, tostring(run.error))
  check(run.result == "Hello there, Ada!", "result %q", tostring(run.result))
  local text = run_buffer_text()
  check(text:find("Hello there, Ada!", 1, true), "run buffer lacks the result:\n%s", text)
  -- The transcript shows the model round (prompt and reply) without the server's run tag.
  check(text:find("model round 1 in Greet", 1, true), "run buffer lacks the model round:\n%s", text)
  check(not text:find("[forge run", 1, true), "run buffer shows the raw tag:\n%s", text)
  check(run.progress and run.progress[1]:find("^begin"), "no progress begin: %s", vim.inspect(run.progress))
end)

test("a server that dies during a run ends the run with a message", function()
  local buf = edit("spin.md")
  wait(15000, function()
    return forge.client(buf) ~= nil
  end, "the client to attach")
  local client = forge.client(buf)
  forge.last_run = nil
  vim.cmd("ForgeRun Forever")
  wait(10000, function()
    return forge.last_run and forge.last_run.progress and #forge.last_run.progress > 0
  end, "the run to begin")
  local run = forge.last_run
  check(client.rpc and client.rpc.pid, "no server pid")
  vim.loop.kill(client.rpc.pid, 9)
  wait(10000, function()
    return run.finished
  end, "the run to end")
  check(run.status == "failed", "status %s", run.status)
  check(run_buffer_text():find("exited during the run", 1, true), "run buffer:\n%s", run_buffer_text())
  wait(5000, function()
    return last_note("language server exited %(code") ~= nil
  end, "a message about the server exiting")
end)

say(string.format("%d passed, %d failed", passed, failed))
local all_clients = vim.lsp.get_clients or vim.lsp.get_active_clients
for _, c in ipairs(all_clients()) do
  vim.lsp.stop_client(c.id)
end
vim.wait(2000, function()
  return #all_clients() == 0
end, 50)
if failed > 0 then
  vim.cmd("cquit 1")
else
  vim.cmd("qall!")
end
