package offlinextract

// places are normalized names of countries, continents, US states and a few
// regions: a tiny gazetteer, because "United States" or "Kenya" carry no cue
// word and are the most linked places of any corpus.
var places = func() map[string]bool {
	m := map[string]bool{}
	for _, list := range []string{placeNamesCountries, placeNamesRegions} {
		start := 0
		for i := 0; i <= len(list); i++ {
			if i == len(list) || list[i] == ',' {
				name := list[start:i]
				for len(name) > 0 && (name[0] == ' ' || name[0] == '\n' || name[0] == '\t') {
					name = name[1:]
				}
				if name != "" {
					m[name] = true
				}
				start = i + 1
			}
		}
	}
	return m
}()

const placeNamesCountries = `afghanistan, albania, algeria, andorra, angola, argentina, armenia, australia,
austria, azerbaijan, bahamas, bahrain, bangladesh, barbados, belarus, belgium, belize, benin, bhutan,
bolivia, bosnia and herzegovina, botswana, brazil, brunei, bulgaria, burkina faso, burundi, cambodia,
cameroon, canada, cape verde, chad, chile, china, colombia, comoros, congo, costa rica, croatia, cuba,
cyprus, czech republic, czechia, denmark, djibouti, dominica, dominican republic, east timor, ecuador,
egypt, el salvador, equatorial guinea, eritrea, estonia, eswatini, ethiopia, fiji, finland, france,
gabon, gambia, georgia, germany, ghana, greece, grenada, guatemala, guinea, guinea bissau, guyana, haiti,
honduras, hungary, iceland, india, indonesia, iran, iraq, ireland, israel, italy, ivory coast, jamaica,
japan, jordan, kazakhstan, kenya, kiribati, kosovo, kuwait, kyrgyzstan, laos, latvia, lebanon, lesotho,
liberia, libya, liechtenstein, lithuania, luxembourg, madagascar, malawi, malaysia, maldives, mali,
malta, mauritania, mauritius, mexico, micronesia, moldova, monaco, mongolia, montenegro, morocco,
mozambique, myanmar, burma, namibia, nauru, nepal, netherlands, holland, new zealand, nicaragua, niger,
nigeria, north korea, north macedonia, macedonia, norway, oman, pakistan, palau, palestine, panama,
papua new guinea, paraguay, peru, philippines, poland, portugal, qatar, romania, russia, rwanda, samoa,
san marino, saudi arabia, senegal, serbia, seychelles, sierra leone, singapore, slovakia, slovenia,
solomon islands, somalia, south africa, south korea, south sudan, spain, sri lanka, sudan, suriname,
sweden, switzerland, syria, taiwan, tajikistan, tanzania, thailand, togo, tonga, trinidad and tobago,
tunisia, turkey, turkmenistan, tuvalu, uganda, ukraine, united arab emirates, united kingdom, uk,
united states, united states of america, usa, us, u s, u s a, uruguay, uzbekistan, vanuatu,
vatican city, venezuela, vietnam, yemen, zambia, zimbabwe, england, scotland, wales, northern ireland,
great britain, britain, soviet union, ussr, yugoslavia, czechoslovakia, east germany, west germany,
prussia, persia, ottoman empire, roman empire, hong kong, macau, puerto rico, greenland, tibet`

const placeNamesRegions = `africa, asia, europe, north america, south america, latin america, oceania,
antarctica, middle east, caribbean, scandinavia, balkans, siberia, southeast asia, east asia,
central asia, south asia, western europe, eastern europe, southern africa, west africa, east africa,
north africa, new england, midwest, alabama, alaska, arizona, arkansas, california, colorado,
connecticut, delaware, florida, hawaii, idaho, illinois, indiana, iowa, kansas, kentucky,
louisiana, maine, maryland, massachusetts, michigan, minnesota, mississippi, missouri, montana,
nebraska, nevada, new hampshire, new jersey, new mexico, new york, north carolina, north dakota, ohio,
oklahoma, oregon, pennsylvania, rhode island, south carolina, south dakota, tennessee, texas, utah,
vermont, virginia, washington, west virginia, wisconsin, wyoming, ontario, quebec, british columbia,
alberta, manitoba, saskatchewan, nova scotia, new brunswick, newfoundland, queensland,
new south wales, victoria, tasmania, western australia, south australia, bavaria, catalonia,
andalusia, tuscany, sicily, sardinia, corsica, brittany, normandy, provence, kashmir, punjab, bengal,
west bengal, kerala, tamil nadu, london, paris, berlin, rome, madrid, tokyo, beijing, moscow,
new york city, los angeles, chicago, toronto, sydney, melbourne, mumbai, delhi, new delhi, kolkata,
shanghai, istanbul, cairo, vienna, amsterdam, dublin, edinburgh, san francisco, boston, hollywood`

// givenNames are common given names of many languages, lower case: a name of two or
// three words that opens with one ("Maren Fenwick", "Owen Tallis") is a person's,
// unless a cue word says otherwise (personShaped). A gazetteer as places is: most
// sentences that name a person say nothing else of what the name is.
var givenNames = set(`aaron abdul abigail ada adam adrian agnes ahmed aidan aisha alan albert alex
alexander alexandra alfred alice alison amanda amelia amy ana andrea andrew angela anna anne annie
anthony antonio arthur astrid barbara beatrice ben benjamin bernard beth bob brian bruce carl carla
carlos carmen caroline catherine charles charlotte chloe chris christian christina christine
christopher claire clara colin connor daniel david deborah dennis diana diego dmitri dominic donald
dorothy douglas duncan edith edmund edward elena elias elizabeth ellen emily emma eric erik ethan eva
evelyn fatima felix fiona francesca francis frank frederick gabriel george gerald giovanni grace
graham greta hannah hans harold harry heinrich helen helena henry hugh ian ines ingrid irene isaac
isabel isabella ivan jack jacob james jane janet jean jennifer jessica joan joanna johann john jonathan
jorge jose joseph joshua juan judith julia julian justin karen karl kate katherine kevin laura lena
leo leon lewis linda lisa louis louise lucas lucy luis luke magnus marco margaret maren maria marie
mark martha martin mary matthew maya michael miguel mohammed muhammad nadia natalie nathan neil niall
nicholas nicola nina noah nora olga oliver olivia oscar owen pablo patricia patrick paul pedro peter
philip pierre rachel ralph rebecca richard robert roger rosa ruth ryan samuel sara sarah sean sergei
simon sofia sophie stefan stephen steven sunita susan sven thomas timothy tom tomas una victor
victoria vincent walter william yusuf zoe`)
