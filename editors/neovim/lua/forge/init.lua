-- forge.nvim: the forge-lsp language server for PromptForge prompts.
--
--   require("forge").setup{}
--
-- starts `forge-lsp serve` for Markdown buffers whose frontmatter declares
-- `promptforge:` and adds :ForgeRun [section], :ForgeRunPrompt [input] and
-- :ForgeCancel. Works on Neovim 0.7 (vim.lsp.start_client) and newer
-- (vim.lsp.start).

local M = {}

--- Server-side commands (workspace/executeCommand) the run lenses invoke.
M.RUN_SECTION = "forge.runSection"
M.RUN_PROMPT = "forge.runPrompt"

--- Name of the environment variable the server reads the gateway key from.
--- The plugin never stores the key; export it in the shell that starts Neovim.
M.KEY_ENV = "PROMPTFORGE_GATEWAY_API_KEY"

local defaults = {
  -- The server command; the first element may be a name on PATH or a path.
  cmd = { "forge-lsp", "serve" },
  -- Model gateway base URL, replay cassette and workspace tools file; nil
  -- leaves the server's environment defaults in place.
  gateway_url = nil,
  replay = nil,
  tools_file = nil,
  -- Files that mark the root of a prompt workspace.
  root_markers = { ".git", "forge.tools.json" },
  -- Called with (client, bufnr) when the server attaches to a buffer.
  on_attach = nil,
  capabilities = nil,
  -- How the run buffer opens: a command such as "botright split" or "vsplit".
  run_window = "botright split",
}

M.config = vim.deepcopy(defaults)

--- State of the current or last run; tests read it.
--- status is "running", "done", "failed" or "cancelled"; finished is set
--- when the server has answered (a cancelled run is "cancelled" at once).
M.last_run = nil

local notified_missing = {}
local group_name = "forge_nvim"
local clients_by_root = {} -- used on 0.7, where vim.lsp.start does not exist

local function notify(msg, level)
  vim.notify("forge.nvim: " .. msg, level or vim.log.levels.INFO)
end

--- is_prompt reports whether the buffer starts with YAML
-- frontmatter containing a `promptforge:` key. Only the first lines are read.
function M.is_prompt(bufnr)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, 200, false)
  if #lines == 0 then
    return false
  end
  local first = lines[1]:gsub("^\239\187\191", ""):gsub("\r$", "")
  if first ~= "---" then
    return false
  end
  for i = 2, #lines do
    local l = lines[i]:gsub("\r$", "")
    if l == "---" or l == "..." then
      return false
    end
    if l:match("^promptforge%s*:") then
      return true
    end
  end
  return false
end

local function root_dir(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = name ~= "" and vim.fn.fnamemodify(name, ":p:h") or vim.fn.getcwd()
  for _, marker in ipairs(M.config.root_markers) do
    local found = vim.fn.finddir(marker, dir .. ";")
    if found ~= "" then
      -- ":p" of a directory ends in "/", so ":h:h" climbs to its parent.
      return vim.fn.fnamemodify(found, ":p:h:h")
    end
    found = vim.fn.findfile(marker, dir .. ";")
    if found ~= "" then
      return vim.fn.fnamemodify(found, ":p:h")
    end
  end
  return dir
end

--- server_settings is what the server receives as initializationOptions and
--- as the "forge" section of workspace/configuration.
function M.server_settings()
  local c = M.config
  local s = { apiKeyEnv = M.KEY_ENV }
  if c.gateway_url and c.gateway_url ~= "" then
    s.gatewayUrl = c.gateway_url
  end
  if c.replay and c.replay ~= "" then
    s.cassette = vim.fn.fnamemodify(c.replay, ":p")
  end
  if c.tools_file and c.tools_file ~= "" then
    s.toolsFile = vim.fn.fnamemodify(c.tools_file, ":p")
  end
  return s
end

--- check_cmd returns nil when the server command can be started, or a message
--- that says what is wrong and how to fix it.
function M.check_cmd(cmd)
  local exe = cmd and cmd[1]
  if type(exe) ~= "string" or exe == "" then
    return "no server command configured; call require('forge').setup{ cmd = { '/path/to/forge-lsp', 'serve' } }"
  end
  if vim.fn.executable(exe) == 1 then
    return nil
  end
  if exe:find("/") and vim.fn.filereadable(exe) == 1 then
    return string.format("the language server '%s' is not executable; check its permissions or the cmd given to require('forge').setup{}", exe)
  end
  return string.format(
    "the language server '%s' was not found. Install it (go install github.com/forge-lsp/forge-lsp/cmd/forge-lsp@latest) or pass its full path: require('forge').setup{ cmd = { '/path/to/forge-lsp', 'serve' } }",
    exe
  )
end

-- Run transcript buffer -------------------------------------------------

local run_buf_name = "forge://run"

local function run_buffer()
  local buf = vim.fn.bufnr(run_buf_name)
  if buf == -1 or not vim.api.nvim_buf_is_valid(buf) then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, run_buf_name)
    vim.bo[buf].buftype = "nofile"
    vim.bo[buf].bufhidden = "hide"
    vim.bo[buf].swapfile = false
    -- Not "markdown": that would make the FileType autocmd try to attach.
    vim.bo[buf].filetype = "forgerun"
  end
  return buf
end

local function show_run_buffer(buf)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      return
    end
  end
  local cur = vim.api.nvim_get_current_win()
  vim.cmd(M.config.run_window)
  vim.api.nvim_win_set_buf(0, buf)
  vim.api.nvim_set_current_win(cur)
end

local function append(lines)
  local run = M.last_run
  if not run then
    return
  end
  if type(lines) == "string" then
    lines = vim.split(lines, "\n", { plain = true })
  end
  for _, l in ipairs(lines) do
    table.insert(run.transcript, l)
  end
  local buf = run.buf
  if buf and vim.api.nvim_buf_is_valid(buf) then
    vim.api.nvim_buf_set_lines(buf, -1, -1, false, lines)
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_buf(win) == buf then
        vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
      end
    end
  end
end

-- Handlers --------------------------------------------------------------

local function running()
  return M.last_run and M.last_run.status == "running"
end

local handlers = {}

-- The server tags a run's transcript with "[forge run <workDoneToken>]".
-- Tagged lines of the current run (and untagged lines while a run is in
-- progress) go to the run buffer; everything else to the default handler.
handlers["window/logMessage"] = function(err, result, ctx, config)
  if running() and result and type(result.message) == "string" then
    local token, rest = result.message:match("^%[forge run ([^%]]*)%] ?(.*)$")
    if not token then
      append(result.message)
      return
    elseif token == M.last_run.token then
      append(rest)
      return
    end
  end
  return vim.lsp.handlers["window/logMessage"](err, result, ctx, config)
end

handlers["window/showMessage"] = function(err, result, ctx, config)
  if running() and result and result.message then
    append("[message] " .. result.message)
    return
  end
  return vim.lsp.handlers["window/showMessage"](err, result, ctx, config)
end

-- Progress of our run is echoed in the command line; the transcript has the details.
handlers["$/progress"] = function(err, result, ctx, config)
  local run = M.last_run
  if run and result and result.token == run.token and type(result.value) == "table" then
    local v = result.value
    local text = table.concat(vim.tbl_filter(function(s)
      return type(s) == "string" and s ~= ""
    end, { v.title, v.message }), ": ")
    if text ~= "" then
      run.progress = run.progress or {}
      table.insert(run.progress, v.kind .. " " .. text)
      vim.api.nvim_echo({ { "forge: " .. text, "Comment" } }, false, {})
    end
    return
  end
  local default = vim.lsp.handlers["$/progress"]
  if default then
    return default(err, result, ctx, config)
  end
end

-- Starting the server ---------------------------------------------------

local function client_config(bufnr)
  local c = M.config
  return {
    name = "forge-lsp",
    cmd = c.cmd,
    root_dir = root_dir(bufnr),
    init_options = M.server_settings(),
    settings = { forge = M.server_settings() },
    handlers = handlers,
    capabilities = c.capabilities or vim.lsp.protocol.make_client_capabilities(),
    on_attach = c.on_attach,
    on_exit = function(code, signal, client_id)
      vim.schedule(function()
        -- Neovim drops the pending request's handler when the server dies:
        -- end the run here so that the next :ForgeRun is not refused.
        local run = M.last_run
        if run and run.status == "running" and run.client_id == client_id then
          run.status = "failed"
          run.finished = true
          run.error = "the language server exited during the run"
          append("■ " .. run.error)
        end
      end)
      if (code and code ~= 0) or (signal and signal ~= 0) then
        vim.schedule(function()
          notify(string.format("the language server exited (code %s, signal %s); its log: %s", tostring(code), tostring(signal), vim.lsp.get_log_path()), vim.log.levels.ERROR)
        end)
      end
    end,
  }
end

--- attach starts (or reuses) the server for a prompt buffer. It returns the
--- client id, or nil after telling the user why not.
function M.attach(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if not M.is_prompt(bufnr) then
    return nil
  end
  local problem = M.check_cmd(M.config.cmd)
  if problem then
    local key = table.concat(M.config.cmd or {}, " ")
    if not notified_missing[key] then
      notified_missing[key] = true
      notify(problem, vim.log.levels.ERROR)
    end
    M.last_error = problem
    return nil
  end
  local cfg = client_config(bufnr)
  local id
  if vim.lsp.start then
    id = vim.lsp.start(cfg, { bufnr = bufnr })
  else
    id = clients_by_root[cfg.root_dir]
    if not id or not vim.lsp.get_client_by_id(id) then
      id = vim.lsp.start_client(cfg)
      clients_by_root[cfg.root_dir] = id
    end
    if id then
      vim.lsp.buf_attach_client(bufnr, id)
    end
  end
  if not id then
    M.last_error = "the language server '" .. tostring(M.config.cmd[1]) .. "' could not be started; see :LspLog"
    notify(M.last_error, vim.log.levels.ERROR)
  end
  return id
end

--- client returns the forge-lsp client attached to a buffer.
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local list = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr }) or vim.lsp.buf_get_clients(bufnr)
  for _, c in pairs(list) do
    if c.name == "forge-lsp" then
      return c
    end
  end
  return nil
end

-- client:request on 0.11+ (method call), client.request before.
local function request(client, method, params, handler, bufnr)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local function is_stopped(client)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:is_stopped()
  end
  return client.is_stopped()
end

local function cancel_request(client, id)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:cancel_request(id)
  end
  return client.cancel_request(id)
end

-- Running ---------------------------------------------------------------

local function norm_heading(s)
  return (s:gsub("^%s*#+%s*", ""):gsub("%s+$", "")):lower()
end

local function lens_args(lens)
  local a = lens.command and lens.command.arguments and lens.command.arguments[1]
  if type(a) == "table" and type(a.uri) == "string" then
    return a
  end
  return nil
end

--- pick_section chooses the run-section lens for a name ("## Greet" or
--- "Greet") or, without a name, the innermost section above `line` (0-based).
function M.pick_section(lenses, name, line)
  local best
  for _, l in ipairs(lenses or {}) do
    local a = lens_args(l)
    if l.command and l.command.command == M.RUN_SECTION and a and a.section then
      if name and name ~= "" then
        if a.section == name then
          return a
        end
        if not best and norm_heading(a.section) == norm_heading(name) then
          best = l
        end
      elseif l.range.start.line <= line and (not best or l.range.start.line >= best.range.start.line) then
        best = l
      end
    end
  end
  return best and lens_args(best) or nil
end

local function result_text(r)
  if type(r) == "string" then
    return r
  end
  if type(r) == "table" and type(r.result) == "string" then
    return r.result
  end
  if r == nil or r == vim.NIL then
    return ""
  end
  return vim.fn.json_encode(r)
end

local run_counter = 0

--- execute sends a run command for args ({uri, section?, input?}) and shows
--- the transcript and the result in the forge://run buffer.
function M.execute(client, command, args, bufnr)
  if running() then
    notify("a run is already in progress; :ForgeCancel stops it", vim.log.levels.WARN)
    return
  end
  run_counter = run_counter + 1
  local token = "forge-nvim-run-" .. run_counter
  local buf = run_buffer()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
  local label = args.section or vim.fn.fnamemodify(vim.uri_to_fname(args.uri), ":t")
  M.last_run = { status = "running", token = token, transcript = {}, buf = buf, args = args, client_id = client.id }
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "▶ Run " .. label .. (args.input and (" with input " .. vim.fn.json_encode(args.input)) or "") })
  M.last_run.transcript = { vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] }
  show_run_buffer(buf)
  local run = M.last_run
  local ok, id = request(client, "workspace/executeCommand", {
    command = command,
    arguments = { args },
    workDoneToken = token,
  }, function(err, result)
    if M.last_run ~= run then
      return
    end
    run.finished = true
    if err then
      if err.code == -32800 or run.status == "cancelled" then
        run.status = "cancelled"
        append("■ Run cancelled: " .. tostring(err.message))
        notify("run of " .. label .. " cancelled")
      else
        run.status = "failed"
        run.error = err.message
        append("■ Run failed: " .. tostring(err.message))
        notify("run of " .. label .. " failed: " .. tostring(err.message), vim.log.levels.ERROR)
      end
      return
    end
    run.result = result_text(result)
    append({ "", "── result ──" })
    append(run.result)
    run.status = "done"
  end, bufnr)
  if not ok then
    run.status = "failed"
    run.error = "the request could not be sent (is the server still running?)"
    append("■ " .. run.error)
    notify(run.error, vim.log.levels.ERROR)
    return
  end
  run.request_id = id
end

local function require_client(bufnr)
  local client = M.client(bufnr)
  if client then
    return client
  end
  if not M.is_prompt(bufnr) then
    notify("this buffer is not a PromptForge prompt (no `promptforge:` in its frontmatter)", vim.log.levels.WARN)
  else
    notify(M.last_error or "the forge-lsp server is not attached to this buffer", vim.log.levels.ERROR)
  end
  return nil
end

--- run_section runs the named section, or the one under the cursor, with an
--- optional input ({{ args }} of the chain).
function M.run_section(name, input)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = require_client(bufnr)
  if not client then
    return
  end
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  local uri = vim.uri_from_bufnr(bufnr)
  request(client, "textDocument/codeLens", { textDocument = { uri = uri } }, function(err, lenses)
    if err then
      notify("could not list the sections: " .. tostring(err.message), vim.log.levels.ERROR)
      return
    end
    local args = M.pick_section(lenses, name, line)
    if not args then
      local names = {}
      for _, l in ipairs(lenses or {}) do
        local a = lens_args(l)
        if a and a.section then
          table.insert(names, a.section)
        end
      end
      if name and name ~= "" then
        notify(string.format("no section %q in this prompt; sections: %s", name, table.concat(names, ", ")), vim.log.levels.ERROR)
      else
        notify("the cursor is not inside a section (H2..H6); use :ForgeRunPrompt to run the whole prompt", vim.log.levels.WARN)
      end
      return
    end
    if input and input ~= "" then
      args = vim.tbl_extend("force", args, { input = input })
    end
    M.execute(client, M.RUN_SECTION, args, bufnr)
  end, bufnr)
end

--- run_prompt runs the whole prompt with the given input.
function M.run_prompt(input)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = require_client(bufnr)
  if not client then
    return
  end
  M.execute(client, M.RUN_PROMPT, { uri = vim.uri_from_bufnr(bufnr), input = input or "" }, bufnr)
end

--- cancel cancels the run in progress. Neovim does not call the request's
--- handler for a RequestCancelled answer, so the answer is noticed when the
--- request leaves client.requests.
function M.cancel()
  local run = M.last_run
  if not run or run.status ~= "running" then
    notify("no run in progress")
    return
  end
  local client = vim.lsp.get_client_by_id(run.client_id)
  run.status = "cancelled"
  append("Cancelling…")
  if not (client and run.request_id) then
    return
  end
  cancel_request(client, run.request_id)
  local waited = 0
  local function poll()
    if run.finished then
      return
    end
    if not client.requests[run.request_id] or is_stopped(client) then
      run.finished = true
      append("■ Run cancelled.")
      notify("run cancelled")
      return
    end
    waited = waited + 50
    if waited >= 30000 then
      append("■ The server did not confirm the cancellation after 30 s.")
      return
    end
    vim.defer_fn(poll, 50)
  end
  vim.defer_fn(poll, 50)
end

-- Setup -----------------------------------------------------------------

--- setup configures the plugin and starts the server for prompt buffers.
function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(defaults), opts or {})
  notified_missing = {}
  M.last_error = nil
  local group = vim.api.nvim_create_augroup(group_name, { clear = true })
  vim.api.nvim_create_autocmd({ "FileType" }, {
    group = group,
    pattern = "markdown",
    callback = function(ev)
      M.attach(ev.buf)
    end,
  })
  -- A file that becomes a prompt after it was opened (frontmatter typed in).
  vim.api.nvim_create_autocmd({ "BufWritePost" }, {
    group = group,
    pattern = { "*.md", "*.markdown" },
    callback = function(ev)
      if not M.client(ev.buf) then
        M.attach(ev.buf)
      end
    end,
  })
  vim.api.nvim_create_user_command("ForgeRun", function(a)
    -- :ForgeRun [section] [-- input]
    local name, input = a.args, nil
    local s, e = a.args:find("%s*%-%-%s")
    if a.args:sub(1, 3) == "-- " then
      name, input = "", a.args:sub(4)
    elseif s then
      name, input = a.args:sub(1, s - 1), a.args:sub(e + 1)
    end
    M.run_section(vim.trim(name), input)
  end, { nargs = "?", desc = "Run the PromptForge section under the cursor (or the named one)" })
  vim.api.nvim_create_user_command("ForgeRunPrompt", function(a)
    M.run_prompt(a.args)
  end, { nargs = "?", desc = "Run the whole PromptForge prompt with the given input" })
  vim.api.nvim_create_user_command("ForgeCancel", function()
    M.cancel()
  end, { desc = "Cancel the PromptForge run in progress" })
  -- Buffers already open when setup runs.
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].filetype == "markdown" then
      M.attach(b)
    end
  end
end

return M
