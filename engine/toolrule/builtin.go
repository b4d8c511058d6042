package toolrule

import "encoding/json"

// The built-in tools' catalog data: what the picker indexes for them. The
// runtime's implementations (engine/tools) report these same values, so a
// capability resolves to the same tool before and during a run.

// WebSearchDescription is the built-in web_search tool's catalog text.
const WebSearchDescription = "Search the web and return a list of results (title, url, description)."

// WebSearchID is the built-in web_search tool's id.
var WebSearchID = ID{Server: "promptforge", Name: "web_search"}

// WebSearchSchema advertises the seed's parameter names (docs/language.md#web-search).
const WebSearchSchema = `{"type":"object","additionalProperties":false,"required":["query"],"properties":{` +
	`"query":{"type":"string","description":"What to search for (at most 400 characters)."},` +
	`"count":{"type":"integer","minimum":1,"maximum":20,"description":"Number of results (1-20)."},` +
	`"freshness":{"type":"string","enum":["pd","pw","pm","py"],"description":"Time filter: pd past day, pw past week, pm past month, py past year."},` +
	`"safe_search":{"type":"string","enum":["off","moderate","strict"],"description":"Safe search level."},` +
	`"domains_include":{"type":"array","maxItems":20,"items":{"type":"string"},"description":"Only return results from these hostnames (at most 20)."},` +
	`"domains_exclude":{"type":"array","maxItems":20,"items":{"type":"string"},"description":"Never return results from these hostnames (at most 20)."},` +
	`"country":{"type":"string","description":"Two-letter country code, e.g. US."},` +
	`"language":{"type":"string","description":"Two- or three-letter language code, e.g. en."}}}`

// WebFetchDescription is the built-in web_fetch tool's catalog text (the
// upstream CLI registers the same tool).
const WebFetchDescription = "Fetch a web page and return its main content as markdown."

// WebFetchID is the built-in web_fetch tool's id.
var WebFetchID = ID{Server: "promptforge", Name: "web_fetch"}

// WebFetchSchema is web_fetch's parameter schema.
const WebFetchSchema = `{"type":"object","additionalProperties":false,"required":["url"],"properties":{` +
	`"url":{"type":"string","description":"The absolute http or https URL of the page to fetch."}}}`

// builtinTools returns the built-in tools in the order a default run
// registers them: web_search, then web_fetch. Their output is untrusted.
func builtinTools() []CatalogTool {
	return []CatalogTool{
		{Entry: Entry{ID: WebSearchID, Name: WebSearchID.Name, Description: WebSearchDescription, Params: ParamNames(json.RawMessage(WebSearchSchema))},
			Wire: WebSearchID.Name, Schema: json.RawMessage(WebSearchSchema), Untrusted: true},
		{Entry: Entry{ID: WebFetchID, Name: WebFetchID.Name, Description: WebFetchDescription, Params: ParamNames(json.RawMessage(WebFetchSchema))},
			Wire: WebFetchID.Name, Schema: json.RawMessage(WebFetchSchema), Untrusted: true},
	}
}
