-- forge.commands: the autocommands that attach the server to prompt buffers
-- and the user commands :ForgeRun, :ForgeRunPrompt, :ForgeCancel and
-- :ForgeRender.

local client = require("forge.client")
local install = require("forge.install")
local render = require("forge.render")
local run = require("forge.run")
local tests = require("forge.test")

local M = {}

local group_name = "forge_nvim"

--- parse_run_args splits ":ForgeRun [section] [-- input]" into name and input.
function M.parse_run_args(args)
  local name, input = args, nil
  local s, e = args:find("%s*%-%-%s")
  if args:sub(1, 3) == "-- " then
    name, input = "", args:sub(4)
  elseif s then
    name, input = args:sub(1, s - 1), args:sub(e + 1)
  end
  return vim.trim(name), input
end

--- register (re)creates the autocommands and the user commands.
function M.register()
  local group = vim.api.nvim_create_augroup(group_name, { clear = true })
  vim.api.nvim_create_autocmd({ "FileType" }, {
    group = group,
    pattern = "markdown",
    callback = function(ev)
      client.attach(ev.buf)
    end,
  })
  -- A file that becomes a prompt after it was opened (frontmatter typed in).
  vim.api.nvim_create_autocmd({ "BufWritePost" }, {
    group = group,
    pattern = { "*.md", "*.markdown" },
    callback = function(ev)
      if not client.get(ev.buf) then
        client.attach(ev.buf)
      end
    end,
  })
  vim.api.nvim_create_user_command("ForgeRun", function(a)
    run.run_section(M.parse_run_args(a.args))
  end, { nargs = "?", desc = "Run the PromptForge section under the cursor (or the named one)" })
  vim.api.nvim_create_user_command("ForgeRunPrompt", function(a)
    run.run_prompt(a.args)
  end, { nargs = "?", desc = "Run the whole PromptForge prompt with the given input" })
  vim.api.nvim_create_user_command("ForgeCancel", function()
    run.cancel()
  end, { desc = "Cancel the PromptForge run in progress" })
  vim.api.nvim_create_user_command("ForgeRender", function(a)
    render.show_rendered(vim.trim(a.args))
  end, { nargs = "?", desc = "Show what the model will see: the rounds of the named section (or the whole prompt), rendered without running a model" })
  vim.api.nvim_create_user_command("ForgeTest", function(a)
    tests.run(vim.trim(a.args))
  end, { nargs = "?", desc = "Run the prompt tests of this buffer (or the named case) and list failures in the quickfix list" })
  vim.api.nvim_create_user_command("ForgeInstall", function(a)
    M.install(a.args)
  end, { nargs = "?", desc = "Download forge-lsp for this platform from the release (checksum verified)" })
end

--- install runs :ForgeInstall [version] and, once the binary is in place,
--- starts it for the open prompts when no cmd option overrides it.
function M.install(version)
  client.notify("downloading forge-lsp…")
  install.install(version, function(ok, msg)
    if not ok then
      client.notify(":ForgeInstall: " .. msg, vim.log.levels.ERROR)
      return
    end
    client.notify(msg)
    client.reset()
    M.attach_open()
  end)
end

--- attach_open starts the server for Markdown buffers already open.
function M.attach_open()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].filetype == "markdown" then
      client.attach(b)
    end
  end
end

return M
