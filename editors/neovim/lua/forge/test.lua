-- forge.test: :ForgeTest [name] runs the prompt tests of the current buffer
-- (NAME.test.yaml, or the test file beside NAME.md) with
-- `forge-lsp test --format json` and fills the quickfix list with the
-- failing cases, one entry per difference at the case's line.

local client = require("forge.client")
local install = require("forge.install")

local M = {}

--- last is the state of the latest :ForgeTest: status "running" or "done",
--- the decoded report, the quickfix items and the closing line.
M.last = nil

--- test_file returns the test file for a buffer name: the name itself when
--- it is a test file, NAME.test.yaml beside NAME.md, or nil.
function M.test_file(name)
  if name:match("%.test%.yaml$") then
    return name
  end
  local stem = name:match("^(.*)%.md$")
  if stem and vim.fn.filereadable(stem .. ".test.yaml") == 1 then
    return stem .. ".test.yaml"
  end
  return nil
end

--- go_quote escapes a case name for `--run` (Go RE2 syntax).
function M.go_quote(s)
  return (s:gsub("[\\%.%+%*%?%(%)|%[%]{}%^%$]", "\\%0"))
end

--- binary is the forge-lsp executable the plugin starts for the server.
function M.binary()
  local cmd = install.resolve()
  return cmd[1]
end

--- items turns a JSON report into quickfix items for the failing cases.
function M.items(report)
  local items = {}
  for _, r in ipairs(report.results or {}) do
    if r.status == "fail" then
      local label = r.stale and "STALE" or "FAIL"
      local msgs = r.messages or {}
      if #msgs == 0 then
        msgs = { "failed" }
      end
      for i, m in ipairs(msgs) do
        local text = m
        if i == 1 then
          text = string.format("%s %s: %s", label, r.name, m)
        end
        table.insert(items, { filename = r.file, lnum = r.line, col = 1, type = "E", text = text })
      end
      if r.diff and r.diff ~= "" then
        for line in r.diff:gmatch("[^\n]+") do
          table.insert(items, { filename = r.file, lnum = r.line, col = 1, type = "I", text = "  " .. line })
        end
      end
    end
  end
  return items
end

--- run runs the tests of the current buffer (only `name` when given) and
--- calls done(last) when the report is in.
function M.run(name, done)
  local buf_name = vim.api.nvim_buf_get_name(0)
  local file = M.test_file(buf_name)
  if not file then
    client.notify(":ForgeTest: no test file for this buffer (open NAME.test.yaml, or NAME.md with NAME.test.yaml beside it)", vim.log.levels.ERROR)
    return
  end
  if vim.bo.modified then
    vim.cmd("silent write")
  end
  local argv = { M.binary(), "test", "--format", "json" }
  if name and name ~= "" then
    table.insert(argv, "--run")
    table.insert(argv, "^" .. M.go_quote(name) .. "$")
  end
  table.insert(argv, file)
  local stdout, stderr = {}, {}
  M.last = { status = "running", file = file }
  local last = M.last
  local ok, id = pcall(vim.fn.jobstart, argv, {
    stdout_buffered = true,
    stderr_buffered = true,
    on_stdout = function(_, data)
      stdout = data
    end,
    on_stderr = function(_, data)
      stderr = data
    end,
    on_exit = function(_, code)
      vim.schedule(function()
        last.status = "done"
        last.code = code
        local text = table.concat(stdout, "\n")
        local decoded, report = pcall(vim.fn.json_decode, text)
        local errs = vim.trim(table.concat(stderr, "\n"))
        if not decoded or type(report) ~= "table" then
          last.error = errs ~= "" and errs or ("forge-lsp test exited with " .. code)
          client.notify(":ForgeTest: " .. last.error, vim.log.levels.ERROR)
          if done then
            done(last)
          end
          return
        end
        last.report = report
        last.items = M.items(report)
        last.summary = string.format("%d passed, %d failed", report.passed or 0, report.failed or 0)
        if (report.skipped or 0) > 0 then
          last.summary = last.summary .. string.format(", %d skipped", report.skipped)
        end
        vim.fn.setqflist({}, " ", { title = "ForgeTest " .. vim.fn.fnamemodify(file, ":t"), items = last.items })
        local level = (report.failed or 0) > 0 and vim.log.levels.WARN or vim.log.levels.INFO
        if code == 2 then
          level = vim.log.levels.ERROR
          last.summary = last.summary .. " (" .. errs .. ")"
        end
        client.notify(":ForgeTest: " .. last.summary, level)
        if #last.items > 0 then
          -- Show the list without taking the cursor from the buffer.
          vim.cmd("copen")
          vim.cmd("wincmd p")
        end
        if done then
          done(last)
        end
      end)
    end,
  })
  if not ok or id <= 0 then
    last.status = "done"
    last.error = "cannot start " .. argv[1]
    client.notify(":ForgeTest: " .. last.error, vim.log.levels.ERROR)
  end
end

return M
