-- forge.run: running a section or the whole prompt through the server's
-- run commands, the forge://run transcript buffer, cancellation, and the
-- handlers that route a run's log, messages and progress to that buffer.

local client = require("forge.client")
local scratch = require("forge.scratch")

local M = {}

--- Server-side commands (workspace/executeCommand) the run lenses invoke.
M.RUN_SECTION = "forge.runSection"
M.RUN_PROMPT = "forge.runPrompt"

--- State of the current or last run; tests read it.
--- status is "running", "done", "failed" or "cancelled"; finished is set
--- when the server has answered (a cancelled run is "cancelled" at once).
M.last_run = nil

local notify = client.notify

-- Run transcript buffer -------------------------------------------------

local run_buf_name = "forge://run"

local function run_buffer()
  return scratch.buffer(run_buf_name, "forgerun")
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

local function running()
  return M.last_run and M.last_run.status == "running"
end

-- Handlers --------------------------------------------------------------

M.handlers = {}

-- The server tags a run's transcript with "[forge run <workDoneToken>]".
-- Tagged lines of the current run (and untagged lines while a run is in
-- progress) go to the run buffer; everything else to the default handler.
M.handlers["window/logMessage"] = function(err, result, ctx, cfg)
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
  return vim.lsp.handlers["window/logMessage"](err, result, ctx, cfg)
end

M.handlers["window/showMessage"] = function(err, result, ctx, cfg)
  if running() and result and result.message then
    append("[message] " .. result.message)
    return
  end
  return vim.lsp.handlers["window/showMessage"](err, result, ctx, cfg)
end

-- Progress of our run is echoed in the command line; the transcript has the details.
M.handlers["$/progress"] = function(err, result, ctx, cfg)
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
    return default(err, result, ctx, cfg)
  end
end

--- on_client_exit ends a run whose server exited: Neovim drops the pending
--- request's handler when the server dies, and the next :ForgeRun must not
--- be refused.
function M.on_client_exit(_, _, client_id)
  local run = M.last_run
  if run and run.status == "running" and run.client_id == client_id then
    run.status = "failed"
    run.finished = true
    run.error = "the language server exited during the run"
    append("■ " .. run.error)
  end
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
function M.execute(c, command, args, bufnr)
  if running() then
    notify("a run is already in progress; :ForgeCancel stops it", vim.log.levels.WARN)
    return
  end
  run_counter = run_counter + 1
  local token = "forge-nvim-run-" .. run_counter
  local buf = run_buffer()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
  local label = args.section or vim.fn.fnamemodify(vim.uri_to_fname(args.uri), ":t")
  M.last_run = { status = "running", token = token, transcript = {}, buf = buf, args = args, client_id = c.id }
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "▶ Run " .. label .. (args.input and (" with input " .. vim.fn.json_encode(args.input)) or "") })
  M.last_run.transcript = { vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] }
  scratch.show(buf)
  local run = M.last_run
  local ok, id = client.request(c, "workspace/executeCommand", {
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

--- run_section runs the named section, or the one under the cursor, with an
--- optional input ({{ args }} of the chain).
function M.run_section(name, input)
  local bufnr = vim.api.nvim_get_current_buf()
  local c = client.require_client(bufnr)
  if not c then
    return
  end
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  local uri = vim.uri_from_bufnr(bufnr)
  client.request(c, "textDocument/codeLens", { textDocument = { uri = uri } }, function(err, lenses)
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
    M.execute(c, M.RUN_SECTION, args, bufnr)
  end, bufnr)
end

--- run_prompt runs the whole prompt with the given input.
function M.run_prompt(input)
  local bufnr = vim.api.nvim_get_current_buf()
  local c = client.require_client(bufnr)
  if not c then
    return
  end
  M.execute(c, M.RUN_PROMPT, { uri = vim.uri_from_bufnr(bufnr), input = input or "" }, bufnr)
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
  local c = vim.lsp.get_client_by_id(run.client_id)
  run.status = "cancelled"
  append("Cancelling…")
  if not (c and run.request_id) then
    return
  end
  client.cancel_request(c, run.request_id)
  local waited = 0
  local function poll()
    if run.finished then
      return
    end
    if not c.requests[run.request_id] or client.is_stopped(c) then
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

return M
