-- forge.dap: the promptforge debugger for nvim-dap.
--
--   require("forge").dap()
--
-- registers `forge-lsp dap` (the same binary as the language server) as
-- nvim-dap's `promptforge` adapter and adds launch configurations for
-- Markdown buffers: debug the current prompt (asks for the input), and
-- debug it offline from a cassette. See docs/debugging.md.

local install = require("forge.install")

local M = {}

--- command returns the forge-lsp binary the plugin uses for the server.
function M.command()
  local cmd = install.resolve()
  return cmd[1]
end

--- adapter is the nvim-dap adapter definition.
function M.adapter()
  return { type = "executable", command = M.command(), args = { "dap" } }
end

--- configurations are the launch configurations added for Markdown.
function M.configurations()
  return {
    {
      type = "promptforge",
      request = "launch",
      name = "Debug prompt",
      program = "${file}",
      input = function()
        return vim.fn.input("input: ")
      end,
      stopOnEntry = true,
    },
    {
      type = "promptforge",
      request = "launch",
      name = "Debug prompt from a cassette",
      program = "${file}",
      input = function()
        return vim.fn.input("input: ")
      end,
      replay = function()
        return vim.fn.input("cassette: ", "", "file")
      end,
    },
  }
end

--- setup registers the adapter and configurations with nvim-dap (or with
--- opts.dap, a table shaped like require("dap")). It returns false, with a
--- notification, when nvim-dap is not installed.
function M.setup(opts)
  opts = opts or {}
  local dap = opts.dap
  if not dap then
    local ok, mod = pcall(require, "dap")
    if not ok then
      vim.notify("forge: nvim-dap is not installed (https://github.com/mfussenegger/nvim-dap); the debugger needs it", vim.log.levels.WARN)
      return false
    end
    dap = mod
  end
  dap.adapters = dap.adapters or {}
  dap.configurations = dap.configurations or {}
  dap.adapters.promptforge = M.adapter()
  local list = dap.configurations.markdown or {}
  for _, c in ipairs(M.configurations()) do
    local present = false
    for _, e in ipairs(list) do
      if e.type == c.type and e.name == c.name then
        present = true
      end
    end
    if not present then
      table.insert(list, c)
    end
  end
  dap.configurations.markdown = list
  return true
end

local function notify(msg)
  vim.notify("forge: " .. msg, vim.log.levels.WARN)
end

local function current(session)
  if session then
    return session
  end
  local ok, dap = pcall(require, "dap")
  return ok and dap.session() or nil
end

--- rerun_section re-runs the prompt from the entry of the current frame's
--- section, answering every unchanged model call from the recording
--- (DAP restartFrame; docs/debugging.md#what-if). session defaults to
--- nvim-dap's current one. Returns false when no run is stopped.
function M.rerun_section(session)
  session = current(session)
  if not session or not session.current_frame then
    notify("no stopped PromptForge debug session: stop at a breakpoint first")
    return false
  end
  session:request("restartFrame", { frameId = session.current_frame.id }, function(err)
    if err then
      notify("re-run from this section: " .. (err.message or vim.inspect(err)))
    end
  end)
  return true
end

--- edit_reply changes the model's reply at a stop after a model round (the
--- Run scope's `reply`) to text, or asks for it with vim.ui.input, then
--- re-runs the section with it. Returns false when no run is stopped.
function M.edit_reply(text, session)
  session = current(session)
  if not session or not session.current_frame then
    notify("no stopped PromptForge debug session: step over a prose block to stop after its reply")
    return false
  end
  session:request("scopes", { frameId = session.current_frame.id }, function(err, body)
    if err or not body then
      notify("edit reply: " .. ((err and err.message) or "no scopes"))
      return
    end
    local ref
    for _, sc in ipairs(body.scopes or {}) do
      if sc.name == "Run" then
        ref = sc.variablesReference
      end
    end
    if not ref then
      notify("edit reply: the frame has no Run scope")
      return
    end
    local function apply(t)
      session:request("setVariable", { variablesReference = ref, name = "reply", value = vim.fn.json_encode(t) }, function(err2)
        if err2 then
          notify("edit reply: " .. (err2.message or vim.inspect(err2)))
          return
        end
        M.rerun_section(session)
      end)
    end
    if text then
      apply(text)
    else
      vim.ui.input({ prompt = "Reply: " }, function(t)
        if t then
          apply(t)
        end
      end)
    end
  end)
  return true
end

return M
