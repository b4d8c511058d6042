-- forge.nvim: the forge-lsp language server for PromptForge prompts.
--
--   require("forge").setup{}
--
-- starts `forge-lsp serve` for Markdown buffers whose frontmatter declares
-- `promptforge:` and adds :ForgeRun [section], :ForgeRunPrompt [input] and
-- :ForgeCancel. Works on Neovim 0.7 (vim.lsp.start_client) and newer
-- (vim.lsp.start).
--
-- This module only wires the parts together: forge.config (options),
-- forge.install (which server binary, :ForgeInstall), forge.client
-- (starting the server), forge.run (runs and their buffer) and
-- forge.commands (autocommands and user commands).

local config = require("forge.config")
local client = require("forge.client")
local run = require("forge.run")
local commands = require("forge.commands")
local install = require("forge.install")
local tests = require("forge.test")

client.handlers = run.handlers
client.on_exit = run.on_client_exit

local M = {
  RUN_SECTION = run.RUN_SECTION,
  RUN_PROMPT = run.RUN_PROMPT,
  KEY_ENV = config.KEY_ENV,
  is_prompt = client.is_prompt,
  check_cmd = client.check_cmd,
  attach = client.attach,
  client = client.get,
  server_settings = config.server_settings,
  pick_section = run.pick_section,
  execute = run.execute,
  run_section = run.run_section,
  run_prompt = run.run_prompt,
  cancel = run.cancel,
  resolve_cmd = install.resolve,
  install = install.install,
  archive_name = install.archive_name,
  platform = install.platform,
  checksum_for = install.checksum_for,
  run_tests = tests.run,
  test_file = tests.test_file,
  dap = function(opts)
    return require("forge.dap").setup(opts)
  end,
  rerun_section = function(session)
    return require("forge.dap").rerun_section(session)
  end,
  edit_reply = function(text, session)
    return require("forge.dap").edit_reply(text, session)
  end,
}

--- setup configures the plugin and starts the server for prompt buffers.
function M.setup(opts)
  config.set(opts)
  client.reset()
  commands.register()
  commands.attach_open()
end

-- The live state stays in its module: forge.config, forge.last_run and
-- forge.last_error read (and, for last_run, write) it there.
local live = {
  config = function()
    return config.values
  end,
  last_run = function()
    return run.last_run
  end,
  last_error = function()
    return client.last_error
  end,
  last_install = function()
    return install.last
  end,
  last_test = function()
    return tests.last
  end,
}

return setmetatable(M, {
  __index = function(_, k)
    local get = live[k]
    return get and get() or nil
  end,
  __newindex = function(t, k, v)
    if k == "last_run" then
      run.last_run = v
    else
      rawset(t, k, v)
    end
  end,
})
