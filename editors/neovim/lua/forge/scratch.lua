-- forge.scratch: the scratch buffers the plugin writes into (forge://run,
-- forge://render) and the window that shows them.

local config = require("forge.config")

local M = {}

--- buffer returns the scratch buffer called name, creating it when it is
--- gone. filetype must not be "markdown": the FileType autocommand would
--- attach the server to the scratch buffer. syntax, when given, sets the
--- highlighting (for example "markdown") without that filetype.
function M.buffer(name, filetype, syntax)
  local buf = vim.fn.bufnr(name)
  if buf == -1 or not vim.api.nvim_buf_is_valid(buf) then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].buftype = "nofile"
    vim.bo[buf].bufhidden = "hide"
    vim.bo[buf].swapfile = false
    vim.bo[buf].filetype = filetype
    if syntax then
      vim.bo[buf].syntax = syntax
    end
  end
  return buf
end

--- show puts buf in a window opened with the run_window setting, unless a
--- window already shows it; the cursor stays where it was.
function M.show(buf)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      return
    end
  end
  local cur = vim.api.nvim_get_current_win()
  vim.cmd(config.values.run_window)
  vim.api.nvim_win_set_buf(0, buf)
  vim.api.nvim_set_current_win(cur)
end

return M
