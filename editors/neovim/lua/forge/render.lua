-- forge.render: :ForgeRender shows what the model will see (docs/review.md)
-- in the forge://render scratch buffer: the server's forge.renderPrompt
-- renders the buffer, unsaved edits included, without running a model or a
-- tool.

local client = require("forge.client")
local scratch = require("forge.scratch")
local run = require("forge.run")

local M = {}

--- The server command that renders a prompt.
M.RENDER = "forge.renderPrompt"

--- State of the current or last rendering; tests read it. status is
--- "running", "done" or "failed"; reply is the server's answer.
M.last = nil

local buf_name = "forge://render"

local function render_buffer()
  -- Markdown highlighting without the markdown filetype.
  return scratch.buffer(buf_name, "forgerender", "markdown")
end

--- request renders args ({uri, section?}) and fills the scratch buffer.
function M.request(c, args, bufnr)
  local state = { status = "running", args = args }
  M.last = state
  client.request(c, "workspace/executeCommand", { command = M.RENDER, arguments = { args } }, function(err, reply)
    if err or type(reply) ~= "table" or type(reply.markdown) ~= "string" then
      state.status = "failed"
      state.error = err and err.message or "the server's reply is not a rendering"
      client.notify("cannot render: " .. tostring(state.error), vim.log.levels.ERROR)
      return
    end
    state.reply = reply
    local buf = render_buffer()
    vim.bo[buf].modifiable = true
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(reply.markdown, "\n", { plain = true }))
    vim.bo[buf].modifiable = false
    scratch.show(buf)
    state.buf = buf
    state.status = "done"
  end, bufnr)
end

--- show_rendered renders the named section (with the H1), or without a
--- name the whole prompt.
function M.show_rendered(name)
  local bufnr = vim.api.nvim_get_current_buf()
  local c = client.require_client(bufnr)
  if not c then
    return
  end
  local uri = vim.uri_from_bufnr(bufnr)
  if not name or name == "" then
    M.request(c, { uri = uri }, bufnr)
    return
  end
  client.request(c, "textDocument/codeLens", { textDocument = { uri = uri } }, function(err, lenses)
    if err then
      client.notify("could not list the sections: " .. tostring(err.message), vim.log.levels.ERROR)
      return
    end
    local args = run.pick_section(lenses, name, 0)
    if not args then
      client.notify(string.format("no section %q in this prompt", name), vim.log.levels.ERROR)
      return
    end
    M.request(c, { uri = uri, section = args.section }, bufnr)
  end, bufnr)
end

return M
