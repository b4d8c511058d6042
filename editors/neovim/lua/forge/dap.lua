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

return M
