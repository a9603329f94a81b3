package httpapi

import (
	"net/http"
	"strconv"

	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/explore"
)

// The exploration routes: what the console (and any client) reads to browse a corpus's
// graph, passages and communities. Each is a thin adapter over a method of the API's Explorer (package explore).

// intParam reads an integer query parameter; def when it is absent.
func intParam(r *http.Request, name string, def int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, engine.BadRequestf("%s: %q is not a number", name, s)
	}
	return n, nil
}

// entitiesResponse is the body of GET /v1/corpora/{corpus}/entities.
type entitiesResponse struct {
	Entities []explore.EntityMatch `json:"entities"`
}

// searchEntities serves the typeahead: entities whose name starts with ?prefix.
func (a *API) searchEntities(w http.ResponseWriter, r *http.Request) {
	limit, err := intParam(r, "limit", 10)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	ms, err := a.x.SearchEntities(r.Context(), r.PathValue("corpus"), r.URL.Query().Get("prefix"), limit)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, entitiesResponse{Entities: ms})
}

// entity serves an entity's neighbourhood: ?depth (default 2) hops, at most ?limit
// neighbours (default: the engine's -max-neighbors).
func (a *API) entity(w http.ResponseWriter, r *http.Request) {
	depth, err := intParam(r, "depth", 2)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	limit, err := intParam(r, "limit", 0)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	nb, err := a.x.Neighborhood(r.Context(), r.PathValue("corpus"), r.PathValue("name"), depth, limit)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, nb)
}

// entityPassages serves an entity with its descriptions and the passages naming it.
func (a *API) entityPassages(w http.ResponseWriter, r *http.Request) {
	limit, err := intParam(r, "limit", 20)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	ps, err := a.x.Passages(r.Context(), r.PathValue("corpus"), r.PathValue("name"), limit)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ps)
}

// chunk serves one passage by id: a citation or an edge's evidence.
func (a *API) chunk(w http.ResponseWriter, r *http.Request) {
	p, err := a.x.Passage(r.Context(), r.PathValue("corpus"), r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// communities serves the community hierarchy: ?level, or every level when absent.
func (a *API) communities(w http.ResponseWriter, r *http.Request) {
	level, err := intParam(r, "level", -1)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if r.URL.Query().Has("level") && level < 0 {
		a.fail(w, r, engine.BadRequestf("level: %d is negative", level))
		return
	}
	tree, err := a.x.CommunityTree(r.Context(), r.PathValue("corpus"), level)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, tree)
}

// community serves one community with its report and members.
func (a *API) community(w http.ResponseWriter, r *http.Request) {
	c, err := a.x.Community(r.Context(), r.PathValue("corpus"), r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}
