-- The shared harness of the headless Neovim tests (headless.lua,
-- features.lua, dap.lua): one line per test on stdout ("ok - NAME" or
-- "not ok - NAME" with the error indented), a closing "N passed, N failed",
-- and an exit status that is non-zero when a test failed.
--
--   local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/harness.lua")

local M = { passed = 0, failed = 0 }

function M.say(s)
  io.stdout:write(s .. "\n")
  io.stdout:flush()
end

-- test runs fn and reports it; an error fails only this test.
function M.test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    M.passed = M.passed + 1
    M.say("ok - " .. name)
  else
    M.failed = M.failed + 1
    M.say("not ok - " .. name)
    for line in tostring(err):gmatch("[^\n]+") do
      M.say("    " .. line)
    end
  end
end

-- check fails the calling test with a formatted message unless cond holds.
function M.check(cond, msg, ...)
  if not cond then
    error(string.format(msg, ...), 2)
  end
end

-- wait polls cond for up to ms milliseconds and fails the test on timeout.
function M.wait(ms, cond, what)
  if not vim.wait(ms, cond, 20) then
    error("timed out after " .. ms .. " ms waiting for " .. what, 2)
  end
end

-- need_bin returns $FORGE_LSP_BIN, or reports the missing variable and exits.
function M.need_bin()
  local bin = os.getenv("FORGE_LSP_BIN")
  if not bin or bin == "" then
    M.say("not ok - FORGE_LSP_BIN is not set")
    M.say("0 passed, 1 failed")
    vim.cmd("cquit 1")
  end
  return bin
end

-- finish prints the summary, stops the LSP clients, runs cleanup (if any)
-- and exits Neovim with the tests' status.
function M.finish(cleanup)
  M.say(string.format("%d passed, %d failed", M.passed, M.failed))
  local clients = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, c in ipairs(clients()) do
    vim.lsp.stop_client(c.id)
  end
  vim.wait(2000, function()
    return #clients() == 0
  end, 50)
  if cleanup then
    cleanup()
  end
  if M.failed > 0 then
    vim.cmd("cquit 1")
  else
    vim.cmd("qall!")
  end
end

return M
