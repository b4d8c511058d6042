-- Headless test of require("forge").dap() against the real forge-lsp binary:
-- the adapter it registers (with a stand-in for nvim-dap's module) is
-- started and driven over DAP to a breakpoint, a scope and the result.
--
--   FORGE_LSP_BIN=/path/to/forge-lsp nvim --headless -u NONE -i NONE \
--     --cmd "set rtp^=editors/neovim" -c "luafile editors/neovim/test/dap.lua"
--
-- Prints one line per test and "N passed, N failed"; exits non-zero on failure.

local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/harness.lua")
local test = h.test
local bin = h.need_bin()

local forge = require("forge")
forge.setup({ cmd = { bin, "serve" } })
local fake = {}

test("dap() registers the promptforge adapter and configurations", function()
  assert(forge.dap({ dap = fake }) == true)
  local a = fake.adapters.promptforge
  assert(a.type == "executable" and a.command == bin and a.args[1] == "dap", vim.inspect(a))
  local names = {}
  for _, c in ipairs(fake.configurations.markdown) do
    table.insert(names, c.name)
  end
  assert(table.concat(names, ",") == "Debug prompt,Debug prompt from a cassette", table.concat(names, ","))
  forge.dap({ dap = fake })
  assert(#fake.configurations.markdown == 2, "registering twice must not duplicate configurations")
end)

test("the adapter debugs a prompt over DAP", function()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  local prog = dir .. "/p.md"
  vim.fn.writefile({ "---", "name: t", "description: d", "promptforge: 1", "---", "", "# T", "", "## A", "",
    "```lua", "local x = args .. \"!\"", "return x", "```" }, prog)
  local a = fake.adapters.promptforge
  local stdin, stdout = vim.loop.new_pipe(false), vim.loop.new_pipe(false)
  local handle = vim.loop.spawn(a.command, { args = a.args, stdio = { stdin, stdout, nil } }, function() end)
  assert(handle, "cannot start " .. a.command)
  local buf, msgs, seq = "", {}, 0
  stdout:read_start(function(_, data)
    if not data then
      return
    end
    buf = buf .. data
    while true do
      local len, rest = buf:match("^Content%-Length: (%d+)\r\n\r\n()")
      if not len or #buf < rest - 1 + tonumber(len) then
        break
      end
      local body = buf:sub(rest, rest + tonumber(len) - 1)
      buf = buf:sub(rest + tonumber(len))
      table.insert(msgs, body)
    end
  end)
  local function send(command, args)
    seq = seq + 1
    local body = vim.fn.json_encode({ seq = seq, type = "request", command = command, arguments = args or vim.empty_dict() })
    stdin:write("Content-Length: " .. #body .. "\r\n\r\n" .. body)
    return seq
  end
  -- wait returns the first message (decoded) that satisfies ok.
  local seen = 0
  local function wait(ok)
    local found
    vim.wait(10000, function()
      while seen < #msgs do
        seen = seen + 1
        local m = vim.fn.json_decode(msgs[seen])
        if ok(m) then
          found = m
          return true
        end
      end
      return false
    end, 10)
    assert(found, "timed out; received: " .. table.concat(msgs, "\n"))
    return found
  end
  local function response(s)
    return wait(function(m)
      return m.type == "response" and m.request_seq == s
    end)
  end
  local function event(name)
    return wait(function(m)
      return m.type == "event" and m.event == name
    end)
  end
  response(send("initialize", { adapterID = "promptforge" }))
  send("launch", { program = prog, input = "hi" })
  send("setBreakpoints", { source = { path = prog }, breakpoints = { { line = 13 } } })
  send("configurationDone")
  local st = event("stopped")
  assert(st.body.reason == "breakpoint", vim.inspect(st))
  local tr = response(send("stackTrace", { threadId = st.body.threadId }))
  local frame = tr.body.stackFrames[1]
  assert(frame.line == 13, vim.inspect(frame))
  local sc = response(send("scopes", { frameId = frame.id }))
  assert(sc.body.scopes[1].name == "Locals", vim.inspect(sc))
  local vars = response(send("variables", { variablesReference = sc.body.scopes[1].variablesReference }))
  assert(vars.body.variables[1].name == "x" and vars.body.variables[1].value == '"hi!"', vim.inspect(vars))
  send("continue", { threadId = st.body.threadId })
  local o = wait(function(m)
    return m.type == "event" and m.event == "output" and m.body.category == "stdout"
  end)
  assert(o.body.output == "hi!\n", vim.inspect(o))
  local ex = event("exited")
  assert(ex.body.exitCode == 0, vim.inspect(ex))
  response(send("disconnect"))
  stdin:close()
  vim.wait(5000, function()
    return not handle:is_active()
  end, 10)
  assert(not handle:is_active(), "forge-lsp dap did not exit after disconnect")
end)

test("edit_reply sets the Run scope's reply and re-runs the frame", function()
  local sent = {}
  local session = { current_frame = { id = 1002 } }
  function session:request(command, args, cb)
    table.insert(sent, command .. " " .. vim.fn.json_encode(args))
    if command == "scopes" then
      cb(nil, { scopes = { { name = "Locals", variablesReference = 3 }, { name = "Run", variablesReference = 7 } } })
    else
      cb(nil, {})
    end
  end
  assert(forge.edit_reply('a "new" reply', session) == true)
  assert(#sent == 3, vim.inspect(sent))
  assert(sent[1]:match("^scopes "), sent[1])
  local set = vim.fn.json_decode(sent[2]:sub(#"setVariable " + 1))
  assert(sent[2]:match("^setVariable ") and set.variablesReference == 7 and set.name == "reply", sent[2])
  assert(vim.fn.json_decode(set.value) == 'a "new" reply', set.value)
  assert(sent[3] == "restartFrame " .. vim.fn.json_encode({ frameId = 1002 }), sent[3])
  assert(forge.rerun_section({}) == false, "no frame: nothing to re-run")
end)

h.finish()
