-- forge.client: deciding which buffers are prompts, checking the server
-- command, starting (or reusing) the forge-lsp client for a buffer, and the
-- small differences between Neovim versions in the client API.

local config = require("forge.config")
local install = require("forge.install")

local M = {}

--- Handlers given to every client, and a function called with
--- (code, signal, client_id) when a server exits. init.lua fills both in
--- (the run module routes the run's messages).
M.handlers = {}
M.on_exit = nil

--- Last reason the server could not be started, shown again by the commands.
M.last_error = nil

--- The command of the last server started and where it came from
--- ("option", "downloaded" or "PATH"; see forge.install).
M.last_cmd, M.last_source = nil, nil

local notified_missing = {}
local clients_by_root = {} -- used on 0.7, where vim.lsp.start does not exist

function M.notify(msg, level)
  vim.notify("forge.nvim: " .. msg, level or vim.log.levels.INFO)
end

--- reset forgets the errors already reported (called by setup).
function M.reset()
  notified_missing = {}
  M.last_error = nil
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
  for _, marker in ipairs(config.values.root_markers) do
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
    "the language server '%s' was not found. Run :ForgeInstall to download it for this platform, put forge-lsp on PATH, or pass its full path: require('forge').setup{ cmd = { '/path/to/forge-lsp', 'serve' } }",
    exe
  )
end

local function client_config(bufnr, cmd)
  local c = config.values
  return {
    name = "forge-lsp",
    cmd = cmd,
    root_dir = root_dir(bufnr),
    init_options = config.server_settings(),
    settings = { forge = config.server_settings() },
    handlers = M.handlers,
    capabilities = c.capabilities or vim.lsp.protocol.make_client_capabilities(),
    on_attach = c.on_attach,
    on_exit = function(code, signal, client_id)
      if M.on_exit then
        vim.schedule(function()
          M.on_exit(code, signal, client_id)
        end)
      end
      if (code and code ~= 0) or (signal and signal ~= 0) then
        vim.schedule(function()
          M.notify(string.format("the language server exited (code %s, signal %s); its log: %s", tostring(code), tostring(signal), vim.lsp.get_log_path()), vim.log.levels.ERROR)
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
  local cmd, source = install.resolve()
  local problem = M.check_cmd(cmd)
  if problem then
    local key = table.concat(cmd or {}, " ")
    if not notified_missing[key] then
      notified_missing[key] = true
      M.notify(problem, vim.log.levels.ERROR)
    end
    M.last_error = problem
    return nil
  end
  M.last_cmd, M.last_source = cmd, source
  local cfg = client_config(bufnr, cmd)
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
    M.last_error = "the language server '" .. tostring(cmd[1]) .. "' could not be started; see :LspLog"
    M.notify(M.last_error, vim.log.levels.ERROR)
  end
  return id
end

--- get returns the forge-lsp client attached to a buffer.
function M.get(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local list = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr }) or vim.lsp.buf_get_clients(bufnr)
  for _, c in pairs(list) do
    if c.name == "forge-lsp" then
      return c
    end
  end
  return nil
end

--- require_client returns the buffer's client, or nil after saying why there is none.
function M.require_client(bufnr)
  local client = M.get(bufnr)
  if client then
    return client
  end
  if not M.is_prompt(bufnr) then
    M.notify("this buffer is not a PromptForge prompt (no `promptforge:` in its frontmatter)", vim.log.levels.WARN)
  else
    M.notify(M.last_error or "the forge-lsp server is not attached to this buffer", vim.log.levels.ERROR)
  end
  return nil
end

-- client:request on 0.11+ (method call), client.request before.
function M.request(client, method, params, handler, bufnr)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

function M.is_stopped(client)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:is_stopped()
  end
  return client.is_stopped()
end

function M.cancel_request(client, id)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:cancel_request(id)
  end
  return client.cancel_request(id)
end

return M
