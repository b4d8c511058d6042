package toolrule

// fixtureCatalog is the calibration catalog: the built-in web_search, the
// upstream web_fetch, typical workspace and MCP tools, and two deliberate
// twins (mcp/search_docs and mcp/search_documentation) on one server.
var fixtureCatalog = []Entry{
	{ID: ID{"promptforge", "web_search"}, Name: "web_search", Description: WebSearchDescription, Params: []string{"count", "country", "domains_exclude", "domains_include", "freshness", "language", "query", "safe_search"}},
	{ID: ID{"promptforge", "web_fetch"}, Name: "web_fetch", Description: "Fetch a web page and return its main content as markdown.", Params: []string{"url"}},
	{ID: ID{"workspace", "read_file"}, Name: "read_file", Description: "Read a file from disk.", Params: []string{"encoding", "path"}},
	{ID: ID{"workspace", "write_file"}, Name: "write_file", Description: "Write text to a file on disk, replacing its contents.", Params: []string{"content", "path"}},
	{ID: ID{"workspace", "list_directory"}, Name: "list_directory", Description: "List the entries of a directory.", Params: []string{"path"}},
	{ID: ID{"workspace", "grep"}, Name: "grep", Description: "Search file contents in the workspace for a regular expression.", Params: []string{"pattern", "path"}},
	{ID: ID{"workspace", "run_shell"}, Name: "run_shell", Description: "Run a shell command and capture its output.", Params: []string{"command", "timeout"}},
	{ID: ID{"mcp", "send_email"}, Name: "send_email", Description: "Send an email message to a recipient.", Params: []string{"body", "subject", "to"}},
	{ID: ID{"mcp", "create_event"}, Name: "create_event", Description: "Create a calendar event with a title, start and end time.", Params: []string{"end", "start", "title"}},
	{ID: ID{"mcp", "get_weather"}, Name: "get_weather", Description: "Get the current weather forecast for a city.", Params: []string{"city"}},
	{ID: ID{"mcp", "sql_query"}, Name: "sql_query", Description: "Run a read-only SQL query against the analytics database.", Params: []string{"query"}},
	{ID: ID{"mcp", "translate"}, Name: "translate", Description: "Translate text from one language into another.", Params: []string{"source_language", "target_language", "text"}},
	{ID: ID{"mcp", "search_docs"}, Name: "search_docs", Description: "Search the product documentation for a topic.", Params: []string{"topic"}},
	{ID: ID{"mcp", "search_documentation"}, Name: "search_documentation", Description: "Search product documentation by topic.", Params: []string{"topic"}},
	{ID: ID{"kb", "lookup_customer"}, Name: "lookup_customer", Description: "Look up a customer record by email address.", Params: []string{"email"}},
	{ID: ID{"kb", "lookup_order"}, Name: "lookup_order", Description: "Look up an order record by order number.", Params: []string{"order_number"}},
}
