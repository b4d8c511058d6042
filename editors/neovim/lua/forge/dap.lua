-- forge.dap: the forge-lsp debugger for nvim-dap.
--
--   require("forge").dap()
--
-- registers dap.adapters.promptforge (`forge-lsp dap`, the same binary the
-- language server uses) and adds launch configurations for Markdown
-- buffers: debug the prompt, and debug the section under the cursor. Set
-- breakpoints with nvim-dap's own :DapToggleBreakpoint on section
-- headings, prose blocks and Lua lines. Launch keys: docs/debugging.md.

local config = require("forge.config")
local install = require("forge.install")

local M = {}

--- The debug type, as in VS Code's launch.json.
M.TYPE = "promptforge"

local function notify(msg, level)
  vim.notify("forge: " .. msg, level or vim.log.levels.INFO)
end

--- adapter is the executable adapter: the resolved server binary with `dap`.
function M.adapter()
  local cmd = install.resolve()
  return {
    type = "executable",
    command = cmd[1],
    args = { "dap" },
  }
end

--- section_at is the address ("## Name") of the H2..H6 section holding
--- `line` (1-based) of the buffer's lines, skipping fenced code; nil in the
--- preamble.
function M.section_at(lines, line)
  local fence, found
  for i = 1, math.min(line, #lines) do
    local l = lines[i]
    local f = l:match("^%s?%s?%s?(```+)") or l:match("^%s?%s?%s?(~~~+)")
    if f then
      if not fence then
        fence = f
      elseif f:sub(1, 1) == fence:sub(1, 1) and #f >= #fence then
        fence = nil
      end
    elseif not fence then
      local hashes, name = l:match("^(#+)%s+(.-)%s*$")
      if hashes and #hashes >= 2 and #hashes <= 6 then
        found = hashes .. " " .. name:gsub("%s*#+$", "")
      elseif hashes and #hashes == 1 then
        found = nil
      end
    end
  end
  return found
end

local function cursor_section()
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  return M.section_at(lines, vim.api.nvim_win_get_cursor(0)[1])
end

local function ask_input()
  return vim.fn.input("forge input: ")
end

--- configurations are the default launch configurations; the gateway and
--- replay options of setup{} carry over.
function M.configurations()
  local c = config.values
  local function with_defaults(t)
    if c.gateway_url and c.gateway_url ~= "" then
      t.gateway = c.gateway_url
    end
    if c.replay and c.replay ~= "" then
      t.replay = vim.fn.fnamemodify(c.replay, ":p")
    end
    return t
  end
  return {
    with_defaults({
      type = M.TYPE,
      request = "launch",
      name = "Debug prompt (forge-lsp)",
      program = "${file}",
      input = ask_input,
      stopOnEntry = true,
    }),
    with_defaults({
      type = M.TYPE,
      request = "launch",
      name = "Debug section under the cursor (forge-lsp)",
      program = "${file}",
      section = cursor_section,
      input = ask_input,
    }),
  }
end

--- setup registers the adapter (call it after require("forge").setup{},
--- whose `cmd` and :ForgeInstall decide the binary) and, unless the filetype already has a
--- promptforge entry, the configurations. dap_module is for tests; by
--- default nvim-dap is required. Returns false (with a message) when
--- nvim-dap is not installed.
function M.setup(dap_module)
  local dap = dap_module
  if dap == nil then
    local ok, mod = pcall(require, "dap")
    if not ok or type(mod) ~= "table" then
      notify("nvim-dap is not installed; add mfussenegger/nvim-dap to use the debugger", vim.log.levels.WARN)
      return false
    end
    dap = mod
  end
  dap.adapters = dap.adapters or {}
  dap.configurations = dap.configurations or {}
  dap.adapters[M.TYPE] = M.adapter()
  local list = dap.configurations.markdown or {}
  for _, c in ipairs(list) do
    if c.type == M.TYPE then
      dap.configurations.markdown = list
      return true
    end
  end
  for _, c in ipairs(M.configurations()) do
    table.insert(list, c)
  end
  dap.configurations.markdown = list
  return true
end

return M
