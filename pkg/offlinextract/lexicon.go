package offlinextract

import "github.com/graphrag/graphrag/pkg/words"

// set is the one set helper (pkg/words).
var set = words.Set

// connectors may join capitalized words inside a name ("University of
// Oxford", "Leonardo da Vinci"), never start or end one (pkg/words).
var connectors = words.Connectors

// commonWords are words that are capitalized at the start of a sentence
// without being names: function words, pronouns, sentence adverbs and
// common openers. A sentence-initial capitalized word in this list is never
// (the start of) an entity.
var commonWords = set(`a about above across after afterwards again against all almost along already also
although always among an and another any anyone anything apart are around as at because before behind
being below beneath beside besides between beyond both but by can cannot could despite did do does
doing down during each either else even ever every everyone everything except few first for formerly
from further furthermore had has have having he hence her here hers herself him himself his how however
i if in including indeed initially inside instead into is it its itself just last later least less
like many may meanwhile might more moreover most much must my neither never nevertheless next no none
nor not nothing now of off often on once one only onto or other others otherwise our ours out outside
over own per perhaps rather recently second several shall she should since so some someone something
sometimes soon still subsequently such than that the their theirs them themselves then there thereafter
therefore these they third this those though through throughout thus to today together too toward
towards two three four five under unlike until up upon us very was we well were what whatever when
whenever where whereas wherever whether which while who whoever whole whom whose why will with within
without would yes yet you your yours yourself originally additionally eventually finally currently
previously formerly generally usually typically later early according following note see born its
part member list type kind form home name number version starring featuring directed written produced located based known called named founded although unfortunately fortunately oddly interestingly notably today tomorrow yesterday here`)

// months and weekdays are capitalized without being named entities.
var months = set(`january february march april may june july august september october november december`)
var weekdays = set(`monday tuesday wednesday thursday friday saturday sunday`)

// pronounI are the contractions of "I", capitalized without being names on their own
// ("I'll"; "Know Where I'm Going" is a name).
var pronounI = set(`i'm i'll i've i'd i’m i’ll i’ve i’d`)

// personTitles before a name say it is a person ("Dr. Smith", "King George").
var personTitles = set(`mr mrs ms miss dr sir dame lord lady king queen prince princess president senator
governor general captain colonel saint st pope professor prof judge emperor empress duke duchess
archbishop bishop reverend rev father brother sister sheikh sultan chancellor minister mayor`)

// Type cue words, matched against the words of a name ("University of
// Oxford" → ORGANIZATION) or against the words after "is a"/"was an" in the
// sentence that mentions it ("is a 2006 British film" → WORK).
var (
	orgCues = set(`university college school institute institution company corporation corp inc ltd llc
group association society party club council committee agency department ministry bank foundation
records studio studios pictures press band fc church academy league federation union airlines airways
army navy police museum library hospital orchestra network channel newspaper magazine publisher
organization organisation firm brand films label team distributor manufacturer government parliament
congress court commission authority trust charity movement order tribe cooperative co-operative
winery brewery`)
	placeCues = set(`city town village river lake mountain mount mountains island islands county province
state district region valley bay sea ocean street road avenue park bridge airport station castle
palace square kingdom republic empire peninsula desert forest gmina canton prefecture country capital
suburb municipality borough neighborhood neighbourhood area territory colony continent hill hills
coast beach harbor harbour port building tower cathedral temple stadium arena metropolitan estuary
reef cape inlet cove headland lighthouse quay`)
	eventCues = set(`war battle revolution olympics championship championships cup festival election
treaty conference tournament expedition crisis massacre siege campaign outbreak hurricane storm
earthquake season inquiry flood disaster`)
	workCues = set(`film movie novel book album song single series show play opera painting poem game
magazine episode documentary sitcom trilogy novella musical ballet symphony sculpture comic manga
anime screenplay story video soundtrack franchise`)
	personCues = set(`actor actress singer writer author poet politician director producer musician
composer painter artist player footballer scientist physicist chemist mathematician philosopher
journalist businessman businesswoman entrepreneur engineer architect lawyer soldier officer king queen
emperor president minister bishop priest designer novelist playwright screenwriter comedian rapper
dancer model coach athlete boxer wrestler cyclist swimmer economist historian sociologist psychologist
biologist astronomer inventor explorer activist diplomat monarch statesman cricketer guitarist drummer
pianist songwriter presenter broadcaster photographer sculptor illustrator cartoonist animator
professor academic teacher physician surgeon doctor nurse saint pope prince princess duke educator
bandleader scholar catcher pitcher goalkeeper defender midfielder forward quarterback filmmaker
specialist member founder leader candidate judge governor senator mayor chef theologian missionary
cinematographer editor man woman son daughter brother sister wife husband father mother grandson
granddaughter widow nephew niece keeper skipper fisherman crewman councillor councilor oceanographer
zoologist winemaker farmer merchant chairman chairwoman sailor headteacher headmaster headmistress
harbourmaster harbormaster deckhand grower`)
	conceptCues = set(`method algorithm theory concept language word term field technique process
system disease condition species genus family protein gene molecule`)
)

// placePrepositions before a name hint at a place ("born in Faversham").
var placePrepositions = set(`in at near from to into across`)

// determiners open the noun phrases taken as CONCEPT entities.
var determiners = set(`a an the this that these those its his her their our each every another`)

// auxiliaries and copulas are never the verb of a relationship.
var auxiliaries = set(`is was are were be been being has had have having do does did will would
shall should can could may might must also not then later still`)

// verbs that name a relationship when found between two mentions. Words
// ending in "ed" count too (see verbBetween).
var verbs = set(`founded directed wrote written married created developed produced published released
acquired owns owned joined won defeated succeeded replaced played starred composed designed built
discovered invented led managed coached signed formed established located born based named
headquartered merged bought sold studied taught attended represented influenced adapted directs writes
leads owns plays stars features featured includes included contains contained borders hosts hosted
follows followed honors honours honored honoured serves served became becomes killed ruled rules
governs governed`)

// notVerbsEd end in "ed" without being verbs of a relationship.
var notVerbsEd = set(`red bed shed hundred united limited indeed speed need seed feed breed sacred
naked wicked kindred rugged alleged skilled talented`)

// prepositions that complete a verb ("born in", "founded by").
var prepositions = set(`in at by of for with from to on into as`)

// nounPhraseStop ends a noun phrase: words that cannot be part of one.
var nounPhraseStop = set(`more most less least very much many such same other own only first last
several various new old called named known
consists occurs stands used includes contains becomes remains refers means lies features follows
serves takes makes gives comes goes runs plays lives seems appears tells shows says uses needs
went came took gave became began grew saw won lost left held wrote sang ran told got kept stood fell
rose spent sent thought felt met paid said heard`)

// irregularParticiples end noun phrases like participles in -ed do ("a demon
// made of 13 dice").
var irregularParticiples = set(`made done known given taken seen built held written found sold told
brought bought thought run set put shown grown drawn born worn shot led won lost kept sent paid`)

// notNames are words that look like names (capitalized, or acronyms) but
// name no entity: abbreviations left alone by punctuation ("Inc", "Jr") and
// common-noun acronyms.
var notNames = set(`dr mr mrs ms st jr sr inc co ltd corp prof mt ft no vol tv dvd ep lp cd dj mc pc ceo
cfo ufo am pm ad bc`)

// titleAbbreviations join the next name across their period ("Dr. Smith",
// "St. Louis").
var titleAbbreviations = set(`dr mr mrs ms st prof mt ft gen col lt sgt capt rev hon gov sen rep`)
