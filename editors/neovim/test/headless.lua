-- Headless test of forge.nvim against the real forge-lsp binary.
--
--   FORGE_LSP_BIN=/path/to/forge-lsp \
--   nvim --headless -u NONE -i NONE --cmd "set rtp^=editors/neovim" \
--        -c "luafile editors/neovim/test/headless.lua"   (.ci/editors.sh wraps it in pcall)
--
-- Prints one line per test and "N passed, N failed"; exits non-zero on failure.

local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/harness.lua")
local say, test, check, wait = h.say, h.test, h.check, h.wait
local bin = h.need_bin()
local here = debug.getinfo(1, "S").source:sub(2)
local testdata = vim.fn.fnamemodify(here, ":p:h:h:h") .. "/testdata"
-- The committed cassette of model.md's "## Greet" with the input "Ada"
-- (kept in step with the engine by the Go test TestEditorCassette), so
-- this suite needs nothing another suite writes; FORGE_CASSETTE may name
-- another recording.
local cassette = os.getenv("FORGE_CASSETTE") or (testdata .. "/model.cassette.jsonl")

vim.cmd("filetype on")
vim.o.swapfile = false
vim.o.shortmess = vim.o.shortmess .. "A"

-- Every vim.notify call is recorded so the tests can assert user messages.
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level or vim.log.levels.INFO })
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

test("diagnostics_delay reaches the server as diagnosticsDelay", function()
  local config = require("forge.config")
  local saved = config.values
  config.set({ diagnostics_delay = 25 })
  check(config.server_settings().diagnosticsDelay == 25, "delay 25 sent")
  config.set({ diagnostics_delay = -1 })
  check(config.server_settings().diagnosticsDelay == nil, "a negative delay is not sent")
  config.set({})
  check(config.server_settings().diagnosticsDelay == nil, "unset: the server's default")
  config.values = saved
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

test(":ForgeRender shows what the model will see in a scratch buffer", function()
  local buf = edit("model.md")
  wait(15000, function()
    return forge.client(buf) ~= nil
  end, "the client to attach")
  local render = require("forge.render")
  render.last = nil
  vim.cmd("ForgeRender Greet")
  wait(30000, function()
    return render.last ~= nil and render.last.status ~= "running"
  end, "the rendering")
  check(render.last.status == "done", "render status %s (%s)", render.last.status, tostring(render.last.error))
  check(render.last.args.section == "## Greet", "rendered %s", tostring(render.last.args.section))
  local b = vim.fn.bufnr("forge://render")
  check(b ~= -1, "no forge://render buffer")
  local text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
  check(text:find("round 2 · ## Greet", 1, true), "the Greet round is missing:\n%s", text)
  check(text:find("Say hello to ⟨args⟩ in at most five words.", 1, true), "the prose with its slot is missing:\n%s", text)
  check(vim.bo[b].buftype == "nofile" and not vim.bo[b].modifiable, "the scratch buffer is a file or editable")
  check(vim.api.nvim_get_current_buf() == buf, "focus left the prompt")
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

-- Server resolution and :ForgeInstall ----------------------------------

local function write_exe(path, text)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  vim.fn.writefile(vim.split(text, "\n"), path)
  vim.fn.setfperm(path, "rwxr-xr-x")
end

-- Nothing below should attach to a buffer left over from the tests above.
vim.cmd("silent! %bwipeout!")
local saved_path = vim.env.PATH
local tmp = vim.fn.tempname()
local path_dir = tmp .. "/path"
vim.fn.mkdir(path_dir, "p")
vim.loop.fs_symlink(bin, path_dir .. "/forge-lsp")

test("server resolution: cmd option, then the downloaded binary, then PATH", function()
  local dir = tmp .. "/data"
  vim.env.PATH = path_dir .. ":" .. saved_path
  forge.setup({ install = { dir = dir } })
  local cmd, source = forge.resolve_cmd()
  check(source == "PATH" and cmd[1] == "forge-lsp" and cmd[2] == "serve", "without a download: %s %s", source, vim.inspect(cmd))
  write_exe(dir .. "/forge-lsp", '#!/bin/sh\necho "forge-lsp 0.1.0"')
  cmd, source = forge.resolve_cmd()
  check(source == "downloaded" and cmd[1] == dir .. "/forge-lsp", "with a download: %s %s", source, vim.inspect(cmd))
  forge.setup({ cmd = { bin, "serve" }, install = { dir = dir } })
  cmd, source = forge.resolve_cmd()
  check(source == "option" and cmd[1] == bin, "with cmd: %s %s", source, vim.inspect(cmd))
  -- A prompt opened with nothing set starts forge-lsp from PATH.
  vim.fn.delete(dir .. "/forge-lsp")
  forge.setup({ install = { dir = dir } })
  local buf = edit("pure.md")
  wait(15000, function()
    return forge.client(buf) ~= nil
  end, "the client started from PATH")
  check(require("forge.client").last_source == "PATH", "source %s", tostring(require("forge.client").last_source))
  -- Nothing anywhere: the message names :ForgeInstall.
  vim.cmd("silent! %bwipeout!")
  vim.env.PATH = tmp .. "/nowhere"
  forge.setup({ install = { dir = dir } })
  edit("pure.md")
  local n = last_note("was not found")
  check(n and n.msg:find(":ForgeInstall", 1, true), "message: %s", vim.inspect(n))
  vim.env.PATH = saved_path
  vim.cmd("silent! %bwipeout!")
end)

-- A release laid out as the CI host serves it, on a loopback file server.
local release = tmp .. "/release"
local os_name, arch = forge.platform()
local function publish(version, binary_text_or_path, sums_override)
  local dir = release .. "/v" .. version
  local stage = tmp .. "/stage-" .. version
  vim.fn.mkdir(dir, "p")
  vim.fn.mkdir(stage, "p")
  vim.fn.system({ "cp", binary_text_or_path, stage .. "/forge-lsp" })
  local name = forge.archive_name(version, os_name, arch)
  vim.fn.system({ "tar", "-czf", dir .. "/" .. name, "-C", stage, "forge-lsp" })
  check(vim.v.shell_error == 0, "tar failed")
  local sum = vim.fn.system({ "sha256sum", dir .. "/" .. name }):match("^(%x+)")
  vim.fn.writefile({ (sums_override or sum) .. "  " .. name, string.rep("0", 64) .. "  other.tar.gz" }, dir .. "/checksums.txt")
  return name, sum
end

local server_job, port
local function start_file_server()
  local lines = {}
  server_job = vim.fn.jobstart({ "python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", release }, {
    on_stdout = function(_, data)
      for _, l in ipairs(data or {}) do
        table.insert(lines, l)
      end
    end,
  })
  check(server_job > 0, "could not start python3 -m http.server")
  wait(10000, function()
    for _, l in ipairs(lines) do
      port = port or l:match("port (%d+)")
    end
    return port ~= nil
  end, "the file server's port")
  return "http://127.0.0.1:" .. port
end

test("archive names and checksums.txt parsing follow the release", function()
  check(forge.archive_name("0.1.0", "linux", "amd64") == "forge-lsp_0.1.0_linux_amd64.tar.gz", "linux name")
  check(forge.archive_name("0.1.0", "windows", "arm64") == "forge-lsp_0.1.0_windows_arm64.zip", "windows name")
  local sums = "abc123  forge-lsp_0.1.0_linux_amd64.tar.gz\nDEF456 *forge-lsp_0.1.0_darwin_arm64.tar.gz\n"
  check(forge.checksum_for(sums, "forge-lsp_0.1.0_darwin_arm64.tar.gz") == "def456", "binary-mode line")
  check(forge.checksum_for(sums, "forge-lsp_0.1.0_linux_arm64.tar.gz") == nil, "missing line")
end)

test(":ForgeInstall downloads, verifies and installs the release binary", function()
  check(os_name, "no release platform for this machine")
  publish("0.1.0", bin)
  local base = start_file_server()
  local dir = tmp .. "/installed"
  vim.env.PATH = saved_path
  forge.setup({ install = { dir = dir, base_url = base } })
  vim.cmd("ForgeInstall")
  wait(30000, function()
    return forge.last_install and forge.last_install.status ~= "running"
  end, "the install")
  check(forge.last_install.status == "done", "install: %s", tostring(forge.last_install.message))
  check(vim.fn.executable(dir .. "/forge-lsp") == 1, "no binary at %s", dir)
  local out = vim.fn.system({ dir .. "/forge-lsp", "version" })
  check(out:find("^forge%-lsp 0%.1%.0"), "installed binary: %q", out)
  local cmd, source = forge.resolve_cmd()
  check(source == "downloaded" and cmd[1] == dir .. "/forge-lsp", "after install: %s", source)
  -- The open prompt is served by the installed binary.
  local buf = edit("pure.md")
  wait(15000, function()
    return forge.client(buf) ~= nil
  end, "the client started from the download")
  check(require("forge.client").last_cmd[1] == dir .. "/forge-lsp", "started %s", vim.inspect(require("forge.client").last_cmd))
  vim.cmd("silent! %bwipeout!")
end)

test(":ForgeInstall refuses an archive whose checksum does not match", function()
  vim.env.PATH = saved_path
  local name = publish("0.0.9", bin, string.rep("ab", 32))
  local dir = tmp .. "/refused"
  forge.setup({ install = { dir = dir, base_url = "http://127.0.0.1:" .. port, version = "0.0.9" } })
  local before = #notes
  vim.cmd("ForgeInstall")
  wait(30000, function()
    return forge.last_install and forge.last_install.status ~= "running"
  end, "the refused install")
  check(forge.last_install.status == "failed", "status %s", forge.last_install.status)
  local msg = forge.last_install.message
  check(msg:find("checksum mismatch for " .. name, 1, true) and msg:find("not installed", 1, true), "message: %s", msg)
  check(vim.fn.filereadable(dir .. "/forge-lsp") == 0, "a binary was installed despite the mismatch")
  local n = notes[#notes]
  check(#notes > before and n.level == vim.log.levels.ERROR and n.msg:find("checksum mismatch", 1, true), "user message: %s", vim.inspect(n))
  -- A version the release does not have is a download error, not a crash.
  forge.setup({ install = { dir = dir, base_url = "http://127.0.0.1:" .. port, version = "9.9.9" } })
  vim.cmd("ForgeInstall")
  wait(30000, function()
    return forge.last_install and forge.last_install.status ~= "running"
  end, "the missing release")
  check(forge.last_install.status == "failed" and forge.last_install.message:find("downloading", 1, true), "message: %s", forge.last_install.message)
end)

test(":ForgeTest runs the buffer's test file and fills the quickfix list", function()
  vim.env.PATH = saved_path
  forge.setup({ cmd = { bin, "serve" } })
  local dir = tmp .. "/tests"
  vim.fn.mkdir(dir, "p")
  local prompt = "---\nname: shout\ndescription: Upper-case the input\npromptforge: 1\n---\n\n# Shout\n\n## Loud\n\n```lua\nreturn string.upper(args)\n```\n"
  vim.fn.writefile(vim.split(prompt, "\n"), dir .. "/shout.md")
  vim.fn.writefile({
    "cases:",
    "  - name: shouts",
    "    input: hi",
    "    expect:",
    "      output: {equals: HI}",
    "  - name: whispers",
    "    input: hi",
    "    expect:",
    "      output: {equals: hi, contains: h}",
  }, dir .. "/shout.test.yaml")
  check(forge.test_file(dir .. "/shout.md") == dir .. "/shout.test.yaml", "test file beside the prompt")
  vim.cmd("silent! %bwipeout!")
  vim.cmd("edit " .. vim.fn.fnameescape(dir .. "/shout.md"))
  vim.cmd("ForgeTest")
  wait(30000, function()
    return forge.last_test and forge.last_test.status == "done"
  end, ":ForgeTest")
  check(forge.last_test.summary == "1 passed, 1 failed", "summary %s (%s)", tostring(forge.last_test.summary), tostring(forge.last_test.error))
  local qf = vim.fn.getqflist()
  check(#qf >= 1, "quickfix is empty")
  check(qf[1].lnum == 6 and qf[1].text:find('FAIL whispers: output: want "hi", got "HI"', 1, true), "first entry: %s", vim.inspect(qf[1]))
  check(vim.api.nvim_buf_get_name(qf[1].bufnr) == dir .. "/shout.test.yaml", "entry file %s", vim.api.nvim_buf_get_name(qf[1].bufnr))
  local n = last_note(":ForgeTest: 1 passed, 1 failed")
  check(n and n.level == vim.log.levels.WARN, "notification %s", vim.inspect(n))
  -- One case by name: the quickfix list empties.
  vim.cmd("ForgeTest shouts")
  wait(30000, function()
    return forge.last_test.status == "done"
  end, ":ForgeTest shouts")
  check(forge.last_test.summary == "1 passed, 0 failed", "summary %s", tostring(forge.last_test.summary))
  check(#vim.fn.getqflist() == 0, "quickfix not emptied")
  vim.cmd("cclose")
  vim.cmd("silent! %bwipeout!")
end)

if server_job then
  vim.fn.jobstop(server_job)
end
vim.env.PATH = saved_path
vim.fn.delete(tmp, "rf")

h.finish()
