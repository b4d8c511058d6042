-- forge.config: the plugin's options, their defaults, and the settings the
-- server receives (initializationOptions and the "forge" section of
-- workspace/configuration).

local M = {}

--- Name of the environment variable the server reads the gateway key from.
--- The plugin never stores the key; export it in the shell that starts Neovim.
M.KEY_ENV = "PROMPTFORGE_GATEWAY_API_KEY"

M.defaults = {
  -- The server command, e.g. { "/path/to/forge-lsp", "serve" }. nil: the
  -- binary :ForgeInstall downloaded, else forge-lsp on PATH.
  cmd = nil,
  -- Where :ForgeInstall puts forge-lsp, and what it downloads:
  -- <base_url>/v<version>/forge-lsp_<version>_<os>_<arch>.tar.gz (.zip on
  -- Windows) and checksums.txt beside it.
  install = {
    dir = vim.fn.stdpath("data") .. "/forge-lsp",
    base_url = "https://github.com/forge-lsp/forge-lsp/releases/download",
    version = "0.1.0",
  },
  -- Model gateway base URL, replay cassette and workspace tools file; nil
  -- leaves the server's environment defaults in place.
  gateway_url = nil,
  -- A gateway file (docs/gateway.md) served in-process; wins over gateway_url.
  gateway_config = nil,
  replay = nil,
  tools_file = nil,
  -- Milliseconds the server waits after the last change before it analyses
  -- the buffer (the server's promptforge.diagnostics.delay); nil: the
  -- server's default (100).
  diagnostics_delay = nil,
  -- Files that mark the root of a prompt workspace.
  root_markers = { ".git", "forge.tools.json" },
  -- Called with (client, bufnr) when the server attaches to a buffer.
  on_attach = nil,
  capabilities = nil,
  -- How the run buffer opens: a command such as "botright split" or "vsplit".
  run_window = "botright split",
}

--- The options in effect; replaced by set().
M.values = vim.deepcopy(M.defaults)

--- set merges user options over the defaults and returns the result.
function M.set(opts)
  M.values = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  return M.values
end

--- server_settings is what the server receives as initializationOptions and
--- as the "forge" section of workspace/configuration.
function M.server_settings()
  local c = M.values
  local s = { apiKeyEnv = M.KEY_ENV }
  if c.gateway_url and c.gateway_url ~= "" then
    s.gatewayUrl = c.gateway_url
  end
  if c.gateway_config and c.gateway_config ~= "" then
    s.gatewayConfig = vim.fn.fnamemodify(c.gateway_config, ":p")
  end
  if c.replay and c.replay ~= "" then
    s.cassette = vim.fn.fnamemodify(c.replay, ":p")
  end
  if c.tools_file and c.tools_file ~= "" then
    s.toolsFile = vim.fn.fnamemodify(c.tools_file, ":p")
  end
  if type(c.diagnostics_delay) == "number" and c.diagnostics_delay >= 0 then
    s.diagnosticsDelay = c.diagnostics_delay
  end
  return s
end

return M
