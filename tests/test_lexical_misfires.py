"""Sentences outside the items where a lexicon entry broke meaning or grammar.

Each review of a lexicon pass wrote sentences of its own (and, for pass 16, read the
entries' slots in WordNet's glosses and examples) and showed where an entry misfired; each
misfire is kept here with the change it made and, where the entry should still fire, a
change it should still make. Rows: (text, the broken change, an intended change or None).
"""

from __future__ import annotations

import pytest

from perturbations.lexical_substitution import default_lexicon, find_slots, substitute


def _changes(text: str) -> set[str]:
    """Every text that one slot of the default lexicon makes from ``text``."""
    slots = find_slots(text, default_lexicon(), frozenset())
    return {substitute(text, [(s, new)]) for s in slots for new in s.synonyms}


PASS_14 = [
    (  # "data point" is a noun (statistics): "data point to" -> "data indicate"
        "The data point to the right of the line is an outlier.",
        "The data indicate the right of the line is an outlier.",
        None,
    ),
    ("The results point to a clear cause.", "", "The results indicate a clear cause."),
    (  # "globally" in mathematics (optimum, convergence) is no place on Earth
        "The function attains its maximum globally at x = 0.",
        "The function attains its maximum worldwide at x = 0.",
        None,
    ),
    ("The method converges globally.", "The method converges worldwide.", None),
    ("Temperatures have risen globally.", "", "Temperatures have risen worldwide."),
    (  # "the world of finance" is no place: "worldwide of finance"
        "Changes spread throughout the world of finance.",
        "Changes spread worldwide of finance.",
        None,
    ),
    ("Rules differ across the world of sport.", "Rules differ worldwide of sport.", None),
    ("It is found throughout the world.", "", "It is found worldwide."),
    (  # "use up to three" is "use at most three", not "use up"
        "You can use up to three attempts.",
        "You can consume to three attempts.",
        None,
    ),
    ("The engine used up to 5 liters of fuel.", "The engine consumed to 5 liters of fuel.", None),
    ("The plant used up the water.", "", "The plant consumed the water."),
    (  # "several" as a pronoun: "a number of" needs its noun
        "Several have argued that taxes are too high.",
        "A number of have argued that taxes are too high.",
        None,
    ),
    ("Several could not attend.", "A number of could not attend.", None),
    ("Several students agree.", "", "A number of students agree."),
    (  # closeness between people is no distance
        "Which family member are you closest to?",
        "Which family member are you nearest to?",
        None,
    ),
    ("Which planet is closest to the sun?", "", "Which planet is nearest to the sun?"),
    (  # a clause with its own subject after "how many/much": "there" is read as a place
        "How many hours did you sleep when they were in the hospital?",
        "How many hours did you sleep when they were there in the hospital?",
        None,
    ),
    (  # "in the form of" is a manner, no place
        "How much of the energy is in the form of heat?",
        "How much of the energy is there in the form of heat?",
        None,
    ),
    ("How many bits are in one byte?", "", "How many bits are there in one byte?"),
    (  # "when" as an indirect question (the time) after "shows", "determines": not "whether"
        "Which of the following best describes when the moon is full?",
        "Which of the following best describes if the moon is full?",
        None,
    ),
    (
        "What determines when a seed is ready to sprout?",
        "What determines if a seed is ready to sprout?",
        None,
    ),
    (  # "only when" / "only if" is a different logical condition
        "Which is true only when the gas is ideal?",
        "Which is true only if the gas is ideal?",
        None,
    ),
    ("What happens when ice is heated?", "", "What happens if ice is heated?"),
    (  # a second line without the first line's !prev= guard let this through
        "This stands in contrast to the earlier view.",
        "This stands unlike the earlier view.",
        None,
    ),
    ("This is in contrast to the earlier view.", "This is unlike the earlier view.", None),
    ("In contrast to mammals, fish lay eggs.", "", "Unlike mammals, fish lay eggs."),
    (  # "thought" as a noun after an adjective, and the phrasal "thought that over"
        "In Western thought that emerged after Kant, reason is central.",
        "In Western believed that emerged after Kant, reason is central.",
        None,
    ),
    ("I thought that over for a week.", "I believed that over for a week.", None),
    (
        "Aristotle thought that the heart was the seat of reason.",
        "",
        "Aristotle believed that the heart was the seat of reason.",
    ),
    (  # a question with "do"/"should": "Do people would rather" is no English
        "Do people prefer to live in cities?",
        "Do people would rather live in cities?",
        None,
    ),
    ("Why does he prefer to work alone?", "Why does he would rather work alone?", None),
    (
        "Should I prefer to socialize with familiar friends?",
        "Should I would rather socialize with familiar friends?",
        None,
    ),
    (
        "I prefer to socialize with familiar friends.",
        "",
        "I would rather socialize with familiar friends.",
    ),
    (  # an older entry, seen in review: "would rather" is a preference, not a degree
        "I would rather stay than go.",
        "I would somewhat stay than go.",
        None,
    ),
    ("It is rather large.", "", "It is somewhat large."),
    (  # "reduction" in chemistry (gain of electrons) is no decrease
        "This reaction is a reduction in which the iron gains electrons.",
        "This reaction is a drop in which the iron gains electrons.",
        None,
    ),
    ("There was a sharp reduction in prices.", "", "There was a sharp drop in prices."),
    (  # "unclear" -> "not clear" only after a form of "be": "remains not clear" is not English
        "The cause remains unclear.",
        "The cause remains not clear.",
        None,
    ),
    ("The cause is unclear.", "", "The cause is not clear."),
]

PASS_15 = [
    (  # "young people" after a determiner or quantifier: "Many the young" is no English
        "Many young people can find work easily.",
        "Many the young can find work easily.",
        None,
    ),
    ("Most young people should vote.", "Most the young should vote.", None),
    ("For young people, work is hard.", "", "For the young, work is hard."),
    (  # "a nuclear power" is a state with nuclear weapons, no source of energy
        "Is France a nuclear power?",
        "Is France a nuclear energy?",
        None,
    ),
    ("Should nuclear power be expanded?", "", "Should nuclear energy be expanded?"),
    ("He is always very punctual.", "He is always very on time.", None),
    ("He is always punctual.", "", "He is always on time."),
    (  # the object sits between "look after" and "well"
        "Parents take good care of their children.",
        "Parents look after well their children.",
        None,
    ),
    (  # worn-out things are not exhausted
        "The brake pads were worn out.",
        "The brake pads were exhausted.",
        None,
    ),
    ("I feel worn out after work.", "", "I feel exhausted after work."),
    (  # "as far as possible" of a distance is no extent
        "The ball rolled as far as possible from the goal.",
        "The ball rolled to the extent possible from the goal.",
        None,
    ),
    (
        "Move the magnet as far as possible from the coil.",
        "Move the magnet wherever possible from the coil.",
        None,
    ),
    (
        "We should avoid sugar as far as possible.",
        "",
        "We should avoid sugar to the extent possible.",
    ),
    (  # an idiom; and "at first" alone must not take over: "love initially sight"
        "It was love at first sight.",
        "It was love at first glance.",
        None,
    ),
    ("It was love at first sight.", "It was love initially sight.", None),
    ("At first sight, the problem looks easy.", "", "At first glance, the problem looks easy."),
    (  # "apart from" also means "in addition to": "except for" keeps one sense only
        "Apart from being expensive, it is also slow.",
        "Except for being expensive, it is also slow.",
        "Aside from being expensive, it is also slow.",
    ),
    (  # "is in the interest of" is "benefits", not a purpose
        "It is in the interest of the company to cut costs.",
        "It is for the sake of the company to cut costs.",
        None,
    ),
    (
        "Is it in the interests of workers to join a union?",
        "Is it for the sake of workers to join a union?",
        None,
    ),
    (
        "Laws should be made in the interest of the people.",
        "",
        "Laws should be made for the sake of the people.",
    ),
    (  # a literal handful of a substance is no number
        "A student added a handful of sand to the water.",
        "A student added a small number of sand to the water.",
        None,
    ),
    (  # epistemic "must" after a pronoun: "has to be at home" reads as an obligation
        "He must be at home now.",
        "He has to be at home now.",
        None,
    ),
    ("They must be rich.", "They have to be rich.", None),
    ("You must feel proud of your son.", "You have to feel proud of your son.", None),
    ("We must act now.", "", "We have to act now."),
    ("People must obey the law.", "", "People have to obey the law."),
    (  # "a great deal of" takes a mass noun; and "a lot of" -> "lots of" after "quite"
        "Quite a lot of people voted.",
        "A great deal of people voted.",
        None,
    ),
    ("Quite a lot of people voted.", "Quite lots of people voted.", None),
    (  # "due to" of a payment is "owed to"
        "The rent is due to the landlord on Friday.",
        "The rent is caused by the landlord on Friday.",
        None,
    ),
    ("The change is due to the heat.", "", "The change is caused by the heat."),
    (  # adverbial "more likely": "likelier" is an adjective
        "Which party would you more likely vote for?",
        "Which party would you likelier vote for?",
        None,
    ),
    ("Which is more likely?", "", "Which is likelier?"),
    (  # "he's" + an irregular participle is "he has"
        "He's broken the record twice.",
        "He is broken the record twice.",
        None,
    ),
    ("She's eaten already.", "She is eaten already.", None),
    ("Who's broken the window?", "Who is broken the window?", None),
    ("She's a doctor.", "", "She is a doctor."),
    ("Where's he gone?", "Where is he gone?", None),
    ("Where's the nearest station?", "", "Where is the nearest station?"),
    (  # "believe" is a firmer conviction than "think" (judged so in batch 15)
        "Do you think that the government should act?",
        "Do you believe that the government should act?",
        "Do you think the government should act?",
    ),
    (  # only species and languages become extinct
        "The fire died out overnight.",
        "The fire became extinct overnight.",
        None,
    ),
    ("Many old customs have died out.", "Many old customs have become extinct.", None),
    ("The dinosaurs died out long ago.", "", "The dinosaurs became extinct long ago."),
    (  # "language acquisition" is a term of linguistics
        "Children acquire language quickly.",
        "Children gain language quickly.",
        None,
    ),
    ("Children acquire knowledge at school.", "", "Children gain knowledge at school."),
    (  # one ends a contract, not an employee
        "The company may terminate employees without notice.",
        "The company may end employees without notice.",
        None,
    ),
    ("He will earn more respect this way.", "He will make more respect this way.", None),
    ("She earns more money than he does.", "", "She makes more money than he does."),
    (  # "in matters of" takes a noun, not a gerund
        "When it comes to choosing a career, what matters most?",
        "In matters of choosing a career, what matters most?",
        "With regard to choosing a career, what matters most?",
    ),
    ("When it comes to money, people disagree.", "", "In matters of money, people disagree."),
    (  # euphemism: "died" changes the tone of an item about a loss
        "My grandmother passed away last year.",
        "My grandmother died last year.",
        None,
    ),
    (  # agreeing "in principle" is no doubt about practice
        "I agree in principle with the plan.",
        "I agree in theory with the plan.",
        None,
    ),
    (  # "at random" before a noun is an adjective: "randomly intervals"
        "At random intervals, a light flashes.",
        "Randomly intervals, a light flashes.",
        None,
    ),
    ("Pick a card at random.", "", "Pick a card randomly."),
    ("How's he done it?", "How is he done it?", None),
    ("How's the weather?", "", "How is the weather?"),
    ("He put forward his hand.", "He proposed his hand.", None),
    ("He put forward a theory.", "", "He proposed a theory."),
    (  # "dependent on" a drug is addiction, not reliance
        "The child is dependent on drugs.",
        "The child depends on drugs.",
        None,
    ),
    ("The crop is dependent on rain.", "", "The crop depends on rain."),
    (  # the modal "has to" + "do with": "must manage with"
        "The firm has to do with less money.",
        "The firm relates to less money.",
        None,
    ),
    ("It has to do with money.", "", "It relates to money."),
]

PASS_16 = [
    (  # passive "called into question" has no passive "cast doubt on"
        "The results were called into question by critics.",
        "The results were cast doubt on by critics.",
        None,
    ),
    ("Critics called into question the results.", "", "Critics cast doubt on the results."),
    (  # "set forth" in a statute lays down; "put forward" only proposes (and "set out")
        "The rights set forth in the statute apply to all tenants.",
        "The rights put forward in the statute apply to all tenants.",
        None,
    ),
    ("The travellers set forth at dawn.", "The travellers put forward at dawn.", None),
    (  # "the day before X" is a preposition: "the previous day the election"
        "He voted the day before the election.",
        "He voted the previous day the election.",
        None,
    ),
    ("He had voted the day before.", "", "He had voted the previous day."),
    ("They met again the next day.", "", "They met again the following day."),
    (  # "at what time t" names a variable: "When t is the velocity zero?"
        "At what time t is the velocity of the ball zero?",
        "When t is the velocity of the ball zero?",
        None,
    ),
    ("At what time does the train arrive?", "", "When does the train arrive?"),
    (  # "stand for" of an acronym asks for its expansion, of a party for its values
        "What does the abbreviation NATO stand for?",
        "What does the abbreviation NATO represent?",
        None,
    ),
    ("What do you stand for in life?", "What do you represent in life?", None),
    (  # "marginally significant" is a term of statistics (p just above the level)
        "The effect was marginally significant (p = 0.06).",
        "The effect was slightly significant (p = 0.06).",
        None,
    ),
    ("The new drug is marginally better.", "", "The new drug is slightly better."),
    (  # "orally" of speech is "aloud", not "by mouth"
        "The instructions were given orally to the class.",
        "The instructions were given by mouth to the class.",
        None,
    ),
    ("The drug is taken orally.", "", "The drug is taken by mouth."),
    (  # "minor offence" is a legal category; "a slight offence" is a mild affront
        "He committed a minor offence.",
        "He committed a slight offence.",
        None,
    ),
    ("He committed a minor offence.", "He committed a small offence.", None),
    ("Only minor changes were made.", "", "Only small changes were made."),
    (  # "get under way" is "begin": "got in progress"
        "The project got under way in 1990.",
        "The project got in progress in 1990.",
        None,
    ),
    (
        "The negotiations got underway last week.",
        "The negotiations got in progress last week.",
        None,
    ),
    ("Work is already under way.", "", "Work is already in progress."),
    (  # in criminal law "deliberate" (premeditated) and "intentional" killing differ, and
        # "unintentional killing" is manslaughter, "accidental" may be no crime
        "He was charged with the intentional killing of his neighbour.",
        "He was charged with the deliberate killing of his neighbour.",
        None,
    ),
    ("It was a deliberate killing.", "It was an intentional killing.", None),
    (
        "The accidental killing of a pedestrian is not always a crime.",
        "The unintentional killing of a pedestrian is not always a crime.",
        None,
    ),
    ("It was an intentional act.", "", "It was a deliberate act."),
    (  # genetic linkage (and bonding) is no mere association
        "Gene A is linked to gene B on chromosome 3.",
        "Gene A is associated with gene B on chromosome 3.",
        None,
    ),
    ("Smoking is linked to cancer.", "", "Smoking is associated with cancer."),
    (  # the pressure a gas exerts is a physical quantity
        "The gas exerts pressure on the walls of the container.",
        "The gas puts pressure on the walls of the container.",
        None,
    ),
    (
        "The union exerts pressure on the government.",
        "",
        "The union puts pressure on the government.",
    ),
    (  # "fill in the blank" is no "complete the blank"
        "Fill in the blank with a suitable word.",
        "Complete the blank with a suitable word.",
        None,
    ),
    ("Please fill in the form and return it.", "", "Please complete the form and return it."),
    (  # "born into poverty / slavery" is no "born to poverty"
        "She was born into poverty.",
        "She was born to poverty.",
        None,
    ),
    ("She was born into a wealthy family.", "", "She was born to a wealthy family."),
    (  # "individuals" of a population of plants or animals are no "people"
        "In a population of deer, most individuals are brown.",
        "In a population of deer, most people are brown.",
        None,
    ),
    (
        "These individuals are heterozygous for the gene.",
        "These people are heterozygous for the gene.",
        None,
    ),
    ("Individuals should be free to choose.", "", "People should be free to choose."),
    ("Many elderly individuals feel lonely.", "", "Many elderly people feel lonely."),
    (  # a processor's instructions (and DNA's) are a technical term
        "The following instructions are executed by the processor.",
        "The following directions are executed by the processor.",
        None,
    ),
    (
        "The instructions for building proteins are stored in DNA.",
        "The directions for building proteins are stored in DNA.",
        None,
    ),
    ("Read the instructions carefully.", "", "Read the directions carefully."),
    (  # "in all" after "seen" is "in every one", not "in total"
        "This pattern is seen in all.",
        "This pattern is seen in total.",
        None,
    ),
    ("There were 12 apples in all.", "", "There were 12 apples in total."),
    (  # "uncomplicated" is a clinical term (no complications), not "easy"
        "A 45-year-old man has an uncomplicated urinary tract infection.",
        "A 45-year-old man has a straightforward urinary tract infection.",
        None,
    ),
    (
        "In uncomplicated cases of pneumonia, antibiotics suffice.",
        "In straightforward cases of pneumonia, antibiotics suffice.",
        None,
    ),
    ("It is an uncomplicated procedure.", "", "It is a straightforward procedure."),
    (  # "during the night of 9 November" names a date: "at night of"
        "The riots began during the night of 9 November.",
        "The riots began at night of 9 November.",
        None,
    ),
    (
        "Voters queued during the day of the election.",
        "Voters queued in the daytime of the election.",
        None,
    ),
    ("Owls hunt during the night.", "", "Owls hunt at night."),
    (  # intransitive "the war drew on" (went on) is no "drew upon"
        "The war drew on for years.",
        "The war drew upon for years.",
        None,
    ),
    ("She drew on her experience.", "", "She drew upon her experience."),
    (  # a "gift" in property law is a transfer, not a "present"
        "The conveyance was a gift to his daughter.",
        "The conveyance was a present to his daughter.",
        None,
    ),
    ("The gift was valid.", "The present was valid.", None),
    ("She bought a birthday gift.", "", "She bought a birthday present."),
    (  # the pass-15 duplicate of "is found in" undid pass 16's guard for a finding of guilt
        "The defendant is found in possession of drugs.",
        "The defendant occurs in possession of drugs.",
        None,
    ),
    ("The virus is found in the blood.", "", "The virus occurs in the blood."),
    (  # "light switch on the wall": "switch" is a noun there
        "A light switch on the wall controls the lamp.",
        "A light turn on the wall controls the lamp.",
        None,
    ),
    ("Switch on the light.", "", "Turn on the light."),
    (  # "mistaken identity" is an idiom (and a defence)
        "It was a case of mistaken identity.",
        "It was a case of erroneous identity.",
        None,
    ),
    ("He held a mistaken belief.", "", "He held an erroneous belief."),
    (  # "void for vagueness": "vague" of a statute is a term of constitutional law
        "The statute is unconstitutionally vague.",
        "The statute is unconstitutionally imprecise.",
        None,
    ),
    (
        "The ordinance is void because it is vague and overbroad.",
        "The ordinance is void because it is imprecise and overbroad.",
        None,
    ),
    ("The witness gave a vague description.", "", "The witness gave an imprecise description."),
    (  # "defective" product or condition is the term of product liability
        "The manufacturer sold a defective product.",
        "The manufacturer sold a faulty product.",
        None,
    ),
    ("The ladder was defective when sold.", "The ladder was faulty when sold.", None),
    ("He replaced the defective parts.", "", "He replaced the faulty parts."),
    (  # "findings of fact" is a term of procedure
        "The court reviewed the findings of fact.",
        "The court reviewed the results of fact.",
        None,
    ),
    ("The findings of the study were clear.", "", "The results of the study were clear."),
    (  # criminal "attempt" is an offence of its own; "effort" is not
        "He was convicted of an attempt to commit murder.",
        "He was convicted of an effort to commit murder.",
        None,
    ),
    ("Her attempt to climb the mountain failed.", "", "Her effort to climb the mountain failed."),
    (  # "slight" grades a change, not a count noun: "a slight role", "slight details"
        "He played a minor role in the war.",
        "He played a slight role in the war.",
        "He played a small role in the war.",
    ),
    ("Only minor details differ.", "Only slight details differ.", "Only small details differ."),
    ("There was a minor increase.", "", "There was a slight increase."),
    (  # "delivered / baked by hand" is no machine's work undone: "delivered manually"
        "The letter was delivered by hand.",
        "The letter was delivered manually.",
        None,
    ),
    ("The sums were calculated by hand.", "", "The sums were calculated manually."),
    (  # "showed" is a definite finding; "indicated" hedges it
        "The results showed that the drug works.",
        "The results indicated that the drug works.",
        "The results demonstrated that the drug works.",
    ),
    (  # literal "carried on the wind" and "carry on" (conduct) a business are no "continue"
        "The pollen is carried on the wind.",
        "The pollen is continued the wind.",
        None,
    ),
    (
        "A small industry can be carried on at home.",
        "A small industry can be continued at home.",
        None,
    ),
    (
        "They carried on a long correspondence.",
        "They continued a long correspondence.",
        None,
    ),
    ("He carried on working after the accident.", "", "He continued working after the accident."),
    ("The war carried on for years.", "", "The war continued for years."),
    (  # "act as if" is pretending, not functioning
        "Do not act as if nothing happened.",
        "Do not function as if nothing happened.",
        None,
    ),
    ("Enzymes act as catalysts.", "", "Enzymes function as catalysts."),
    (  # "usage" of language is custom, not "use"
        "Formal usage differs from spoken usage.",
        "Formal use differs from spoken usage.",
        None,
    ),
    ("The usage of the word changed.", "The use of the word changed.", None),
    ("Water usage rose sharply.", "", "Water use rose sharply."),
    (  # "spectacles" (shows) after "of" are no "glasses"
        "It was typical of spectacles of the age.",
        "It was typical of glasses of the age.",
        None,
    ),
    (  # a "switch on" a policy is a noun
        "His switch on abortion cost him the election.",
        "His turn on abortion cost him the election.",
        None,
    ),
    (  # "they long ago abandoned" has no room for "a long time ago" before the verb
        "They long ago abandoned the plan.",
        "They a long time ago abandoned the plan.",
        None,
    ),
    ("It happened long ago.", "", "It happened a long time ago."),
    (  # "moved to | the north of Italy" (its northern part) is not "north of Italy"
        "The family moved to the north of Italy in 1950.",
        "The family moved north of Italy in 1950.",
        None,
    ),
    ("The town lies to the north of Rome.", "", "The town lies north of Rome."),
    (  # "accidental death" is a term of insurance (and law)
        "The policy pays double in the case of accidental death.",
        "The policy pays double in the case of unintentional death.",
        None,
    ),
    ("It was an accidental injury.", "", "It was an unintentional injury."),
    (  # "vague" of a feeling is faint, not "imprecise"
        "She felt a vague uneasiness.",
        "She felt an imprecise uneasiness.",
        None,
    ),
    (  # the noun "stems": "removing stems from fruit"
        "A device for removing stems from fruit.",
        "A device for removing arises from fruit.",
        None,
    ),
    ("The leaves stem from the main stem.", "", "The leaves arise from the main stem."),
    (  # a noun "drawing on rock" is no "drawing upon"
        "A line drawing on rock was found in the cave.",
        "A line drawing upon rock was found in the cave.",
        None,
    ),
    (  # the definition of a function: each element is assigned, not "linked with"
        "Each input is associated with exactly one output.",
        "Each input is linked with exactly one output.",
        None,
    ),
    ("Smoking is associated with cancer.", "", "Smoking is linked with cancer."),
    (  # "innate ideas" is a term of philosophy (Descartes, Locke)
        "Locke denied that there are innate ideas.",
        "Locke denied that there are inborn ideas.",
        None,
    ),
    ("She has an innate talent for music.", "", "She has an inborn talent for music."),
    (  # "insufficient funds" is a term of banking
        "The check was dishonored for insufficient funds.",
        "The check was dishonored for inadequate funds.",
        None,
    ),
]

#: Misfires of passes 15 and 16 in a random sample of their slots in WordNet's example
#: sentences (100 judged, 91 kept), rewritten here as sentences of our own.
GENERAL_TEXT = [
    (  # "asking for" a price is not "requesting"
        "What are they asking for petrol these days?",
        "What are they requesting petrol these days?",
        None,
    ),
    (  # being away from home is not shunning it
        "If I stay away from home too long, I miss it.",
        "If I avoid home too long, I miss it.",
        None,
    ),
    (  # the verb "spare"
        "She couldn't spare time for the meeting.",
        "She couldn't free time for the meeting.",
        None,
    ),
    ("I have little spare time.", "", "I have little free time."),
    (  # the body holding a drug is not storing it
        "The body can retain this drug for days.",
        "The body can keep this drug for days.",
        None,
    ),
    (  # "make use of"; and "made of" is not "made from" in a science item
        "Little use has been made of solar energy.",
        "Little use has been made from solar energy.",
        None,
    ),
    ("He signed the papers in person.", "He signed the papers face to face.", None),
    (  # "strike out on one's own" is to go independent
        "She struck out on her own at twenty.",
        "She struck out by herself at twenty.",
        None,
    ),
    ("Maize agriculture spread north.", "Maize farming spread north.", None),
    (  # political colleagues are no co-workers
        "She thanked her colleagues in parliament.",
        "She thanked her co-workers in parliament.",
        None,
    ),
]

#: Entries outside a reviewed section (older lines, duplicates) found misfiring by passes 15-17
#: and their reviews.
OLDER = [
    (  # "later" before a noun is an adjective: no adverb in its place
        "Later studies confirmed the result.",
        "Afterwards studies confirmed the result.",
        None,
    ),
    ("Later studies confirmed the result.", "Subsequently studies confirmed the result.", None),
    ("We met later that day.", "We met afterwards that day.", None),
    ("Later, he went home.", "", "Afterwards, he went home."),
    (  # sentence adverb "more likely": "probable" is no adverb
        "More likely, he forgot.",
        "More probable, he forgot.",
        None,
    ),
    ("Which is the more likely cause?", "", "Which is the more probable cause?"),
    (  # "it is necessary for X to": "needed for us to act" does not read
        "It is necessary for us to act.",
        "It is needed for us to act.",
        "It is essential for us to act.",
    ),
    ("It is necessary for us to act.", "It is required for us to act.", None),
    (  # "most" before a determiner, "most of" before a bare noun: both wrong
        "The majority of the people agree.",
        "Most the people agree.",
        "Most of the people agree.",
    ),
    ("The majority of people agree.", "Most of people agree.", "Most people agree."),
    (  # intent is not premeditation (found by the review of pass 17's verbs)
        "He did not intend to kill anyone.",
        "He did not plan to kill anyone.",
        "He did not mean to kill anyone.",
    ),
    ("They intend to visit Rome.", "", "They plan to visit Rome."),
    (  # "the place of worship" is a building (a duplicate line of pass 17a lacked the guard)
        "The mosque took the place of worship of the old town.",
        "The mosque replaced worship of the old town.",
        None,
    ),
    ("Machines have taken the place of workers.", "", "Machines have replaced workers."),
    # blind batch 32 (old lines): a mandative "should" after "that" is no "ought to"
    (
        "It is better that people should keep to their own kind.",
        "It is better that people ought to keep to their own kind.",
        None,
    ),
    ("People should vote.", "", "People ought to vote."),
    (  # defending one's country is military service, not protection
        "Everyone should defend their country, if called upon.",
        "Everyone should protect their country, if called upon.",
        None,
    ),
    ("We must defend our rights.", "", "We must protect our rights."),
    (  # a hedge inside a verb phrase
        "What should the students most likely do next?",
        "What should the students in all likelihood do next?",
        "What should the students most probably do next?",
    ),
    (  # the respondent's own state; "a nation" may be a people
        "I am proud to be a citizen of my country.",
        "I am proud to be a citizen of my nation.",
        None,
    ),
    ("Which country has the largest population?", "", "Which nation has the largest population?"),
    (  # "equal opportunities" is a term of social policy
        "Everyone should have equal opportunities in life.",
        "Everyone should have equal chances in life.",
        None,
    ),
    (  # "absorbing" is stronger than "interesting"
        "It is important to do work that is interesting.",
        "It is important to do work that is absorbing.",
        "It is important to do work that is engaging.",
    ),
    ("The first hominids could be described as:", "The first hominids could be depicted as:", None),
    ("Which group shuns politics?", "Which group avoids politics?", None),
    # blind batch 33 (old lines)
    (  # reliability of results (repeatability) is no trust
        "To make sure the results are reliable, the student should repeat it.",
        "To make sure the results are trustworthy, the student should repeat it.",
        None,
    ),
    ("Buses are reliable.", "", "Buses are dependable."),
    (
        "Which would most likely help the population to increase?",
        "Which would most likely assist the population to increase?",
        None,
    ),
    (
        "Which would help the population to increase?",
        "Which would help the population to go up?",
        None,
    ),
    (  # "more significant" may read as harsher
        "Punishment should be more important than rehabilitation.",
        "Punishment should be more significant than rehabilitation.",
        "Punishment should be of greater importance than rehabilitation.",
    ),
    ("Obedience is an important virtue.", "Obedience is a key virtue.", None),
]

#: Misfires of pass 17's verb sections (p17b, p17a), found by review on sentences of our own
#: and by reading the sections' slots in WordNet's example sentences (rewritten here).
PASS_17_VERBS = [
    (  # a participle in a reduced relative: "Species came from ... share" has two finite verbs
        "Species originated from a common ancestor share many traits.",
        "Species came from a common ancestor share many traits.",
        None,
    ),
    (
        "Maize originated from wild grasses in Mexico.",
        "",
        "Maize came from wild grasses in Mexico.",
    ),
    (  # an empire declines in power; "decreased" reads as size
        "The Roman Empire declined gradually over three centuries.",
        "The Roman Empire decreased gradually over three centuries.",
        None,
    ),
    ("Sales declined sharply after the scandal.", "", "Sales decreased sharply after the scandal."),
    (  # "classify" information is to make it secret
        "The government classifies documents to protect national security.",
        "The government categorizes documents to protect national security.",
        None,
    ),
    (
        "Files classified by the Pentagon were released in 2020.",
        "Files categorized by the Pentagon were released in 2020.",
        None,
    ),
    ("Whales are classified as mammals.", "", "Whales are categorized as mammals."),
    (  # "deemed to have" is a legal fiction, not a judgement
        "A tenant who does not object within 30 days is deemed to have consented.",
        "A tenant who does not object within 30 days is judged to have consented.",
        None,
    ),
    ("The committee deemed the proposal unsafe.", "", "The committee judged the proposal unsafe."),
    (  # "break codes" is to decipher them
        "Companies that violate codes must pay fines.",
        "Companies that break codes must pay fines.",
        None,
    ),
    (  # "shut out" split by its object
        "She shuts him out whenever they argue.",
        "She closes him out whenever they argue.",
        None,
    ),
    ("She shuts the door every night.", "", "She closes the door every night."),
    (  # "denounce to" is to inform against: "condemned him to" reads as a sentence
        "Neighbours denounced him to the Gestapo.",
        "Neighbours condemned him to the Gestapo.",
        None,
    ),
    ("Critics denounced the decision.", "", "Critics condemned the decision."),
    (  # the noun "flourishes" (ornaments)
        "Composers often add decorative flourishes to a melody.",
        "Composers often add decorative thrives to a melody.",
        None,
    ),
    ("The arts flourished under the Medici.", "", "The arts thrived under the Medici."),
    (  # "Doppler broadening" is a term of spectroscopy
        "Doppler broadening widens spectral lines.",
        "Doppler widening widens spectral lines.",
        None,
    ),
    (  # "warranted" is guaranteed by a warranty
        "The product is warranted against defects for one year.",
        "The product is justified against defects for one year.",
        None,
    ),
    ("Is the criticism warranted?", "", "Is the criticism justified?"),
    (  # a drawn outline is no "set out"
        "The shape is outlined in red on the map.",
        "The shape is set out in red on the map.",
        None,
    ),
    (
        "The main findings are outlined in the next section.",
        "",
        "The main findings are set out in the next section.",
    ),
    (  # "worked together" needs a plural subject
        "She collaborated on the book with her sister.",
        "She worked together on the book with her sister.",
        None,
    ),
    (
        "Scientists from both countries collaborate closely with each other.",
        "",
        "Scientists from both countries work together closely with each other.",
    ),
    (  # the noun "combat"
        "During combat the heart rate rises sharply.",
        "During fight against the heart rate rises sharply.",
        None,
    ),
    (
        "New laws were passed to combat the spread of disease.",
        "",
        "New laws were passed to fight against the spread of disease.",
    ),
    (  # mobile-phone "roaming"
        "Turn off international roaming to avoid charges.",
        "Turn off international wandering to avoid charges.",
        None,
    ),
    ("Wolves roam the northern forests.", "", "Wolves wander the northern forests."),
    (  # lines that concur meet in one point (geometry)
        "The three medians of a triangle concur at the centroid.",
        "The three medians of a triangle agree at the centroid.",
        None,
    ),
    ("Most judges concur.", "", "Most judges agree."),
    (  # "recur" in a recursion; "return" is another term of programming
        "The procedure recurs on each subtree.",
        "The procedure returns on each subtree.",
        None,
    ),
    (
        "The function recurs until n reaches zero.",
        "The function returns until n reaches zero.",
        None,
    ),
    ("The symptoms recurred after treatment.", "", "The symptoms returned after treatment."),
    (  # "disseminated zoster" is a diagnosis
        "The patient had disseminated zoster.",
        "The patient had spread zoster.",
        None,
    ),
    (
        "Social media can disseminate false information quickly.",
        "",
        "Social media can spread false information quickly.",
    ),
    (  # perishable goods do not die
        "Fresh food perishes quickly in hot weather.",
        "Fresh food dies quickly in hot weather.",
        None,
    ),
    (  # an idiom
        "Publish or perish is the rule in academia.",
        "Publish or die is the rule in academia.",
        None,
    ),
    ("Many soldiers perished in the battle.", "", "Many soldiers died in the battle."),
    (  # the noun "disregard"
        "He showed blatant disregard.",
        "He showed blatant ignore.",
        None,
    ),
    ("Do not disregard safety warnings.", "", "Do not ignore safety warnings."),
    (  # "shielding" is a term of atomic structure
        "Inner electrons shield the outer electrons from the nucleus.",
        "Inner electrons protect the outer electrons from the nucleus.",
        None,
    ),
    (
        "Sunscreen can shield your skin from damage.",
        "",
        "Sunscreen can protect your skin from damage.",
    ),
    (  # "reinforce" is a term of operant conditioning
        "Praise reinforces good behavior in children.",
        "Praise strengthens good behavior in children.",
        None,
    ),
    (
        "These exercises reinforce the muscles of the back.",
        "",
        "These exercises strengthen the muscles of the back.",
    ),
    (  # a participle: "Slavery, did away with in 1865"
        "Slavery, abolished in 1865, remained a bitter memory.",
        "Slavery, did away with in 1865, remained a bitter memory.",
        None,
    ),
    ("Parliament abolished the tax.", "", "Parliament did away with the tax."),
    (  # "devise" in a will is to leave land
        "I hereby devise Blackacre to my daughter.",
        "I hereby come up with Blackacre to my daughter.",
        None,
    ),
    (
        "I give, devise and bequeath all my estate to my wife.",
        "I give, come up with and bequeath all my estate to my wife.",
        None,
    ),
    ("Engineers must devise a better method.", "", "Engineers must come up with a better method."),
    (  # "give credence to" is to believe; "lend credence to" is to make believable
        "New findings lend credence to the theory.",
        "New findings give credence to the theory.",
        None,
    ),
    ("The data lend support to the hypothesis.", "", "The data give support to the hypothesis."),
    (  # "confess to a priest" names the listener, not the deed
        "She confessed to a priest that she had lied.",
        "She admitted to a priest that she had lied.",
        None,
    ),
    ("He confessed to the crime.", "", "He admitted to the crime."),
    (  # the adjective "accelerated"
        "The region experienced accelerated growth after the war.",
        "The region experienced sped up growth after the war.",
        None,
    ),
    ("Policies accelerated growth in the region.", "", "Policies sped up growth in the region."),
    (  # "compensation" is a term of physiology
        "The kidneys compensate for respiratory acidosis.",
        "The kidneys make up for respiratory acidosis.",
        None,
    ),
    (  # rising out of a place is no "stem from"
        "Bubbles arose from the bottom of the flask.",
        "Bubbles stemmed from the bottom of the flask.",
        None,
    ),
    (
        "Several problems arose from the decision.",
        "",
        "Several problems stemmed from the decision.",
    ),
    (  # "proceeds with" = takes place with (stereochemistry)
        "The reaction proceeds with inversion of configuration.",
        "The reaction goes ahead with inversion of configuration.",
        None,
    ),
    (  # "proceed with" a manner (moved along)
        "They proceeded with gingerly steps over the rocks.",
        "They went ahead with gingerly steps over the rocks.",
        None,
    ),
    ("We will proceed with the plan.", "", "We will go ahead with the plan."),
    (  # a species' range in space
        "These birds range from Canada to Argentina.",
        "These birds vary from Canada to Argentina.",
        None,
    ),
    ("Temperatures range from 10 to 30 degrees.", "", "Temperatures vary from 10 to 30 degrees."),
    (  # "compelled speech" is a term of US law
        "The First Amendment protects against compelled speech.",
        "The First Amendment protects against forced speech.",
        None,
    ),
    ("The law compels employers to pay overtime.", "", "The law forces employers to pay overtime."),
    (  # "halt" is a term of computability (halting problem)
        "Does the machine halt on every input?",
        "Does the machine stop on every input?",
        None,
    ),
    ("The army halted the advance.", "", "The army stopped the advance."),
    (  # "acts linearly" means something else in algebra
        "Near zero the function behaves linearly.",
        "Near zero the function acts linearly.",
        None,
    ),
    (  # "acts as" = serves as
        "Light behaves as a wave in this experiment.",
        "Light acts as a wave in this experiment.",
        None,
    ),
    ("Children behave differently at school.", "", "Children act differently at school."),
    (  # the noun "display" before the verb "features"
        "The phone's display features a large screen.",
        "The phone's exhibit features a large screen.",
        None,
    ),
    ("Patients display symptoms within a week.", "", "Patients exhibit symptoms within a week."),
    (  # the adjective "requested"
        "Please fill in all requested fields.",
        "Please fill in all asked for fields.",
        None,
    ),
    ("Students may request an extension.", "", "Students may ask for an extension."),
    (  # "meet the hype" is no idiom
        "The film did not live up to the hype.",
        "The film did not meet the hype.",
        None,
    ),
    (
        "The restaurant lived up to its name.",
        "The restaurant met its name.",
        None,
    ),
    ("The results lived up to our expectations.", "", "The results met our expectations."),
    (  # the noun "voices" before the verb "support"
        "Many voices support the plan.",
        "Many expresses support the plan.",
        None,
    ),
    (
        "Many people voiced concern about the plan.",
        "",
        "Many people expressed concern about the plan.",
    ),
    (  # intent is not premeditation (criminal law)
        "He intended to kill the guard.",
        "He planned to kill the guard.",
        None,
    ),
    ("I do not intend to vote this year.", "", "I do not plan to vote this year."),
    (  # "mean to you" is no intention
        "What do they mean to you?",
        "What do they intend to you?",
        None,
    ),
    (  # destiny, not intention
        "We were never meant to be together.",
        "We were never intended to be together.",
        None,
    ),
    ("I meant to call you yesterday.", "", "I intended to call you yesterday."),
    (  # a seat won in an election
        "The party took a seat from the Conservatives.",
        "The party sat down from the Conservatives.",
        None,
    ),
    ("Please take a seat.", "", "Please sit down."),
    (  # "need to intend to" does not read
        "We need to plan to arrive early.",
        "We need to intend to arrive early.",
        None,
    ),
    ("We plan to visit Rome.", "", "We intend to visit Rome."),
    (  # "start contact" is no collocation
        "They initiated contact with the rebels.",
        "They started contact with the rebels.",
        None,
    ),
    ("They initiated talks with the rebels.", "", "They started talks with the rebels."),
    (  # the adjective "departing"
        "Departing passengers must show their tickets.",
        "Leaving passengers must show their tickets.",
        None,
    ),
    ("The train departs at noon.", "", "The train leaves at noon."),
    (  # "cherish the hope" is an idiom
        "He cherished the hope that she would return.",
        "He treasured the hope that she would return.",
        None,
    ),
    ("I cherish my freedom.", "", "I treasure my freedom."),
    (  # "boasts about 200" is "has some 200"
        "The city boasts about 200 parks.",
        "The city brags about 200 parks.",
        None,
    ),
    (
        "The island boasts about a dozen beaches.",
        "The island brags about a dozen beaches.",
        None,
    ),
    ("He boasted about his new car.", "", "He bragged about his new car."),
    (  # "aggravate" a person is to annoy them
        "The constant noise aggravated the neighbours.",
        "The constant noise worsened the neighbours.",
        None,
    ),
    ("Smoking aggravates the symptoms of asthma.", "", "Smoking worsens the symptoms of asthma."),
    (  # foreseeability is a term of negligence law
        "The harm could not have been reasonably foreseen.",
        "The harm could not have been reasonably predicted.",
        None,
    ),
    (
        "A reasonable person would foresee the risk of injury.",
        "A reasonable person would predict the risk of injury.",
        None,
    ),
    ("No one foresaw the collapse of the bank.", "", "No one predicted the collapse of the bank."),
    (  # "motion to compel" is a term of civil procedure
        "The plaintiff filed a motion to compel discovery.",
        "The plaintiff filed a motion to force discovery.",
        None,
    ),
    (  # the noun "requests"
        "Repeated requests went unanswered.",
        "Repeated asks for went unanswered.",
        None,
    ),
    (
        "Pending requests will be processed tomorrow.",
        "Pending asks for will be processed tomorrow.",
        None,
    ),
]


#: Misfires of pass 17's adjective and noun sections (p17c, p17d), found on sentences of our
#: own and in WordNet's examples and glosses (seed 1742 for the sample of "slender").
PASS_17_ADJ_NOUNS = [
    (  # "apparent" as "seeming", against "real": not "evident"
        "The improvement was apparent, not real.",
        "The improvement was evident, not real.",
        None,
    ),
    (
        "His sufferings were apparent rather than real.",
        "His sufferings were evident rather than real.",
        None,
    ),
    (
        "It soon became apparent that the plan had failed.",
        "",
        "It soon became evident that the plan had failed.",
    ),
    (  # "clad in" hairs, glass or scales is covered, not "dressed"
        "The stem is clad in fine brown hairs.",
        "The stem is dressed in fine brown hairs.",
        None,
    ),
    ("The tower is clad in glass and steel.", "The tower is dressed in glass and steel.", None),
    (
        "The shark's body is clad in tough scales.",
        "The shark's body is dressed in tough scales.",
        None,
    ),
    (
        "She arrived clad in a long black dress.",
        "",
        "She arrived dressed in a long black dress.",
    ),
    (  # "slender" names species and is a term of engineering (slender columns)
        "The slender loris is a nocturnal primate.",
        "The slim loris is a nocturnal primate.",
        None,
    ),
    (
        "A slender column buckles under a small load.",
        "A slim column buckles under a small load.",
        None,
    ),
    ("The party won by a slender majority.", "", "The party won by a slim majority."),
    (  # "entitled" of a person's attitude is no title
        "Many teachers complain about entitled students.",
        "Many teachers complain about titled students.",
        None,
    ),
    (
        "He has an entitled attitude towards his parents.",
        "He has a titled attitude towards his parents.",
        None,
    ),
    (
        "She wrote a book entitled The Second Sex.",
        "",
        "She wrote a book titled The Second Sex.",
    ),
    (  # "mutually intelligible" (linguistics), "the intelligible world" (Plato): terms
        "Italian and Spanish are partly mutually intelligible.",
        "Italian and Spanish are partly mutually understandable.",
        None,
    ),
    (
        "Plato contrasts the intelligible world with the visible world.",
        "Plato contrasts the understandable world with the visible world.",
        None,
    ),
    ("His handwriting is barely intelligible.", "", "His handwriting is barely understandable."),
    (  # "more far-off" does not read
        "The more distant galaxies recede faster.",
        "The more far-off galaxies recede faster.",
        None,
    ),
    ("Traders sailed to distant lands.", "", "Traders sailed to far-off lands."),
    (  # the simplest explanation of Occam's razor is the most parsimonious one
        "By Occam's razor, the simplest explanation should be preferred.",
        "By Occam's razor, the most straightforward explanation should be preferred.",
        None,
    ),
    (
        "Scientists prefer a simpler explanation with fewer assumptions.",
        "Scientists prefer a more straightforward explanation with fewer assumptions.",
        None,
    ),
    (
        "What is the simplest way to solve this?",
        "",
        "What is the most straightforward way to solve this?",
    ),
    (  # "close reading" is a term of literary criticism
        "The New Critics practised a close reading of the poem.",
        "The New Critics practised a careful reading of the poem.",
        None,
    ),
    ("Pay close attention to the signs.", "", "Pay careful attention to the signs."),
    (  # "special care" of a patient is specialised care, not carefulness
        "Premature babies need special care after birth.",
        "Premature babies need particular care after birth.",
        None,
    ),
    (
        "The special care unit admitted twelve babies.",
        "The particular care unit admitted twelve babies.",
        None,
    ),
    ("Take special care when handling acids.", "", "Take particular care when handling acids."),
    (  # "a simple case of", "a simple matter of": "mere", not "straightforward"
        "It was a simple case of mistaken identity.",
        "It was a straightforward case of mistaken identity.",
        None,
    ),
    ("It is a simple matter of time.", "It is a straightforward matter of time.", None),
    (
        "This is a simple question to answer.",
        "",
        "This is a straightforward question to answer.",
    ),
    (  # the verb "varying" (changing the amounts) is no adjective
        "The plants were grown by varying amounts of light each day.",
        "The plants were grown by differing amounts of light each day.",
        None,
    ),
    (
        "The experiment involves varying levels of salt in the water.",
        "The experiment involves differing levels of salt in the water.",
        None,
    ),
    ("People hold varying opinions on this.", "", "People hold differing opinions on this."),
    (  # "not prepared to" is unwilling, "not ready to" is not yet; passive "are prepared"
        "The government is not prepared to negotiate with terrorists.",
        "The government is not ready to negotiate with terrorists.",
        None,
    ),
    (
        "The samples are prepared to be viewed under a microscope.",
        "The samples are ready to be viewed under a microscope.",
        None,
    ),
    ("I am prepared to pay higher taxes.", "", "I am ready to pay higher taxes."),
    (  # "bound to be" of a person may be a duty, not a certainty
        "Judges are bound to be impartial.",
        "Judges are sure to be impartial.",
        None,
    ),
    (
        "Doctors were bound to be truthful with patients.",
        "Doctors were sure to be truthful with patients.",
        None,
    ),
    (
        "There is bound to be a mistake somewhere.",
        "",
        "There is sure to be a mistake somewhere.",
    ),
    ("It is bound to be cold tomorrow.", "", "It is sure to be cold tomorrow."),
    (  # a second line without the first line's !prev=out: "left out outdoors"
        "The laundry was left out in the open air.",
        "The laundry was left out outdoors.",
        None,
    ),
    ("The concert was held in the open air.", "", "The concert was held outdoors."),
    (  # "a penny dreadful" is a kind of cheap novel
        "He bought a penny dreadful at the station.",
        "He bought a penny terrible at the station.",
        None,
    ),
    (  # "unlike long ago" does not read
        "Unlike in the recent past, prices are stable.",
        "Unlike recently, prices are stable.",
        None,
    ),
    ("Unlike in the distant past, few people farm.", "Unlike long ago, few people farm.", None),
    (  # "accustomed to" + infinitive (older English): "used to rise" is the past habit
        "They were accustomed to rise at dawn.",
        "They were used to rise at dawn.",
        None,
    ),
    (
        "They were accustomed to working at night.",
        "",
        "They were used to working at night.",
    ),
    (  # "youth" before a noun ("youth players") is no time of life
        "The coach put his trust in his youth players.",
        "The coach put his trust when he was young players.",
        None,
    ),
    ("In his youth he was a keen sailor.", "", "When he was young he was a keen sailor."),
    (  # a part in one's life is a role, a portion is a share of time
        "Music is a large part of my life.",
        "Music is a large portion of my life.",
        None,
    ),
    (
        "Rice makes up a large part of their diet.",
        "",
        "Rice makes up a large portion of their diet.",
    ),
    (  # "lend a hand to someone": "help to someone" is no English
        "She lent a hand to her neighbour.",
        "She helped to her neighbour.",
        None,
    ),
    ("Lend a hand to whoever needs it.", "Help to whoever needs it.", None),
    ("He often lends a hand with the chores.", "", "He often helps with the chores."),
    (  # "that case" of a court is a lawsuit, not a condition
        "In that case, the Supreme Court ruled that segregation was unconstitutional.",
        "If so, the Supreme Court ruled that segregation was unconstitutional.",
        None,
    ),
    (
        "In that case, the plaintiff sued for damages.",
        "If so, the plaintiff sued for damages.",
        None,
    ),
    ("In that case, we should leave now.", "", "If so, we should leave now."),
    (  # "the point of intersection" (geometry), "the point of no return": no purpose
        "What is the point of intersection of the two lines?",
        "What is the purpose of intersection of the two lines?",
        None,
    ),
    ("What is the point of no return?", "What is the purpose of no return?", None),
    (  # the rhetorical "point of life" (is there any?) is not its "purpose"
        "What is the point of life?",
        "What is the purpose of life?",
        None,
    ),
    ("What is the point of voting?", "", "What is the purpose of voting?"),
    (  # "came to my mind" is no opinion
        "It came to my mind that the door was open.",
        "It came in my view that the door was open.",
        None,
    ),
    (
        "It brought that to my mind at once.",
        "It brought that in my view at once.",
        None,
    ),
    ("To my mind, the film was too long.", "", "In my view, the film was too long."),
    (  # "on the surface" of a planet is a place
        "On the surface, the temperature reaches 460 degrees.",
        "Superficially, the temperature reaches 460 degrees.",
        None,
    ),
    ("On the surface, the plan seems sound.", "", "Superficially, the plan seems sound."),
    (  # "has come" is a participle: "has emerge"
        "New evidence has come to light.",
        "New evidence has emerge.",
        "New evidence has emerged.",
    ),
    (
        "I have come to the conclusion that he lied.",
        "I have conclude that he lied.",
        "I have concluded that he lied.",
    ),
    ("She came to the conclusion that he lied.", "", "She concluded that he lied."),
    ("The facts came to light later.", "", "The facts emerged later."),
    (  # "the first / last name on the list" is an ordinal, no given name or surname
        "The first name on the list was Adams.",
        "The given name on the list was Adams.",
        None,
    ),
    ("The last name on the list was Young.", "The surname on the list was Young.", None),
    ("What is your last name?", "", "What is your surname?"),
    ("What is your first name?", "", "What is your given name?"),
    (  # "by force" in mechanics is the agent, not a manner
        "Objects are accelerated by force.",
        "Objects are accelerated forcibly.",
        None,
    ),
    ("The rebels seized the city by force.", "", "The rebels seized the city forcibly."),
    (  # "by degrees Celsius" is a unit
        "Temperature is measured by degrees Celsius.",
        "Temperature is measured gradually Celsius.",
        None,
    ),
    (  # "the effect of heat on the strength of steel" is no basis
        "We measured the effect of heat on the strength of steel.",
        "We measured the effect of heat on the basis of steel.",
        None,
    ),
    (
        "He was hired on the strength of his references.",
        "",
        "He was hired on the basis of his references.",
    ),
    (  # computer memory
        "The data are stored in memory of the device.",
        "The data are stored in remembrance of the device.",
        None,
    ),
    (
        "They built a statue in memory of the victims.",
        "",
        "They built a statue in remembrance of the victims.",
    ),
    (  # answering to the best of one's knowledge is no hedge
        "I answered to the best of my knowledge.",
        "I answered as far as I know.",
        None,
    ),
    (
        "To the best of my knowledge, nobody objected.",
        "",
        "As far as I know, nobody objected.",
    ),
    (  # "cut in half" of a budget or a risk is halved, "cut in two" is split
        "The budget was cut in half last year.",
        "The budget was cut in two last year.",
        None,
    ),
    (
        "The new drug cuts in half the risk of stroke.",
        "The new drug cuts in two the risk of stroke.",
        None,
    ),
    (  # "goods of necessity" is a noun phrase, no adverb
        "Food and shelter are goods of necessity.",
        "Food and shelter are goods necessarily.",
        None,
    ),
    (
        "Such a rule must of necessity be general.",
        "",
        "Such a rule must necessarily be general.",
    ),
    (  # "it is a shame to steal" is a disgrace, not a pity
        "It is a shame to steal from the poor.",
        "It is a pity to steal from the poor.",
        None,
    ),
    ("What a shame!", "", "What a pity!"),
    (  # "the youth" may be one young man
        "The youth who stole the car was arrested.",
        "The young people who stole the car was arrested.",
        None,
    ),
    (
        "The youth had a knife in his pocket.",
        "The young people had a knife in his pocket.",
        None,
    ),
    ("Today's youth are more tolerant.", "", "Today's young people are more tolerant."),
    (  # "an individual" of genetics and ecology is any organism, not "a person"
        "In pea plants, an individual whose genotype is Tt is tall.",
        "In pea plants, a person whose genotype is Tt is tall.",
        None,
    ),
    (
        "An individual who smokes is at higher risk.",
        "",
        "A person who smokes is at higher risk.",
    ),
]

PASS_17_ADV_HYPHEN = [
    (  # "orbit" as a noun after "to" or in a compound, or without an object
        "The satellite returned to orbit the next day.",
        "The satellite returned to revolve around the next day.",
        None,
    ),
    (
        "A low earth orbit satellite passes overhead every 90 minutes.",
        "A low earth revolve around satellite passes overhead every 90 minutes.",
        None,
    ),
    (
        "The electron orbit radius grows with the energy level.",
        "The electron revolve around radius grows with the energy level.",
        None,
    ),
    (
        "The moon orbits around the Earth once a month.",
        "The moon revolves around around the Earth once a month.",
        None,
    ),
    (
        "Satellites orbit the Earth at high speed.",
        "",
        "Satellites revolve around the Earth at high speed.",
    ),
    (  # "indicated" a person is pointing at them, not showing them
        "He indicated his opponents with a nod.",
        "He showed his opponents with a nod.",
        None,
    ),
    ("He indicated his agreement with a nod.", "", "He showed his agreement with a nod."),
    ("Once bitten, twice shy.", "Once bitten, two times shy.", None),  # proverbs
    (
        "Lightning never strikes twice in the same place.",
        "Lightning never strikes two times in the same place.",
        None,
    ),
    (
        "The insect is twice as long as it is wide.",
        "",
        "The insect is two times as long as it is wide.",
    ),
    (  # "closely related" is kinship, not care
        "Biologists studied closely related species of finches.",
        "Biologists studied carefully related species of finches.",
        None,
    ),
    (
        "Watch closely as the liquid changes colour.",
        "",
        "Watch carefully as the liquid changes colour.",
    ),
    ("They drive fast cars on weekends.", "They drive quickly cars on weekends.", None),
    ("Some people drive fast on the motorway.", "", "Some people drive quickly on the motorway."),
    (  # "privately funded" is an adverb of the participle, not of "discussed"
        "The minister discussed privately funded schools.",
        "The minister discussed in private funded schools.",
        None,
    ),
    ("They talked privately about the plan.", "", "They talked in private about the plan."),
    (  # "insofar as possible" has no clause for "to the extent that"
        "The data were collected insofar as possible.",
        "The data were collected to the extent that possible.",
        None,
    ),
    (
        "The law was applied insofar as it was possible.",
        "",
        "The law was applied to the extent that it was possible.",
    ),
    (  # "how soon", "as soon ... as": "shortly" takes no degree word
        "How soon after birth should a baby be fed?",
        "How shortly after birth should a baby be fed?",
        None,
    ),
    (
        "Treat the wound as soon after the injury as possible.",
        "Treat the wound as shortly after the injury as possible.",
        None,
    ),
    (
        "The war ended soon after the treaty was signed.",
        "",
        "The war ended shortly after the treaty was signed.",
    ),
    (  # "a little more" as a pronoun (an amount): "slightly more" needs an adjective
        "Can you tell us a little more about yourself?",
        "Can you tell us slightly more about yourself?",
        None,
    ),
    ("I would like a bit more.", "I would like slightly more.", None),
    (
        "The second sample is a little more acidic.",
        "",
        "The second sample is slightly more acidic.",
    ),
    ("He left a week or so ago.", "He left a week or thereabouts ago.", None),
    ("The storm lasted a week or so.", "", "The storm lasted a week or thereabouts."),
    (  # "all the time" after "knew it" is "all along", not "constantly"
        "I knew it all the time.",
        "I knew it constantly.",
        None,
    ),
    ("Prices change all the time.", "", "Prices change constantly."),
    (  # "in truth" as the object of "interested in"
        "Scientists are interested in truth and justice.",
        "Scientists are interested in fact and justice.",
        None,
    ),
    ("In truth, the plan failed.", "", "In fact, the plan failed."),
    (  # the noun "concentrate"
        "The tomato concentrate on the shelf has expired.",
        "The tomato focus on the shelf has expired.",
        None,
    ),
    (
        "Students should concentrate on the main ideas.",
        "",
        "Students should focus on the main ideas.",
    ),
    (  # taking advantage of people is exploiting them
        "Employers take advantage of workers who lack access to services.",
        "Employers make use of workers who lack access to services.",
        None,
    ),
    (
        "Students should take advantage of the opportunity.",
        "",
        "Students should make use of the opportunity.",
    ),
    (  # "for my part" is the speaker's, whoever the subject
        "Personally, he preferred tea to coffee.",
        "For my part, he preferred tea to coffee.",
        None,
    ),
    ("Personally, I prefer tea.", "", "For my part, I prefer tea."),
    ("We met at last year's conference.", "We met finally year's conference.", None),
    ("The result was announced at last.", "", "The result was announced finally."),
    (  # "call on" a pupil to speak, or on neighbours (a visit), is no urging
        "The teacher called on the students to answer the question.",
        "The teacher urged the students to answer the question.",
        None,
    ),
    (
        "She called on the neighbours to borrow some sugar.",
        "She urged the neighbours to borrow some sugar.",
        None,
    ),
    (
        "The UN called on the government to release the prisoners.",
        "",
        "The UN urged the government to release the prisoners.",
    ),
    (  # "take on" a team is to play against it
        "The club took on the champions despite the risk.",
        "The club assumed the champions despite the risk.",
        None,
    ),
    (
        "She took on the responsibility for the project.",
        "",
        "She assumed the responsibility for the project.",
    ),
    (  # variance "accounted for" is explained, not made up (statistics)
        "The model accounts for 40 percent of the variance in income.",
        "The model makes up 40 percent of the variance in income.",
        None,
    ),
    (
        "Genetics accounts for half of the variation in height.",
        "Genetics makes up half of the variation in height.",
        None,
    ),
    ("Women account for half of the workforce.", "", "Women make up half of the workforce."),
    (  # "a force for good"
        "Technology can be a force for good.",
        "Technology can be a force permanently.",
        None,
    ),
    ("He left the country for good.", "", "He left the country permanently."),
    (  # "came as" + "yet another"
        "The vote came as yet another blow to the government.",
        "The vote came still another blow to the government.",
        None,
    ),
    ("An as yet unknown species was found.", "", "A still unknown species was found."),
    (  # "came to the meeting" is a place
        "The engineers came to the meeting to reach an agreement on costs.",
        "The engineers reached the meeting to reach an agreement on costs.",
        None,
    ),
    ("The jury came to a unanimous decision.", "", "The jury reached a unanimous decision."),
    (
        "We plan to set up a meeting with the company next week.",
        "We plan to establish a meeting with the company next week.",
        None,
    ),
    (
        "The company plans to set up a new school.",
        "",
        "The company plans to establish a new school.",
    ),
    (  # "earlier" of a date is no "sooner"
        "The fossil is earlier than expected by the model.",
        "The fossil is sooner than expected by the model.",
        None,
    ),
    ("The flowers bloomed earlier than expected.", "", "The flowers bloomed sooner than expected."),
    (  # "not just about" is "not only concerning"
        "The debate is not just about everyone having a job.",
        "The debate is not almost everyone having a job.",
        None,
    ),
    ("Just about everyone agreed.", "", "Almost everyone agreed."),
    (  # the verb "let alone" (leave alone)
        "Children should be let alone to play.",
        "Children should be much less to play.",
        None,
    ),
    ("She can't walk, let alone run.", "", "She can't walk, much less run."),
    (  # strength of commitment, not clarity
        "I unequivocally support the death penalty.",
        "I unambiguously support the death penalty.",
        None,
    ),
    (
        "The report stated unequivocally that the drug is safe.",
        "",
        "The report stated unambiguously that the drug is safe.",
    ),
    (
        "You need to bring the records up-to-date.",
        "You need to bring the records current.",
        None,
    ),
    ("We need up-to-date maps.", "", "We need current maps."),
    ("The milk is out-of-date.", "The milk is outdated.", None),  # expired, not old-fashioned
    ("Do not eat out-of-date food.", "Do not eat outdated food.", None),
    (
        "The museum uses out-of-date equipment.",
        "",
        "The museum uses outdated equipment.",
    ),
    (  # an attractive partner in trade is a desirable one
        "China is an attractive partner for trade.",
        "China is a good-looking partner for trade.",
        None,
    ),
    ("She met an attractive man.", "", "She met a good-looking man."),
    (  # "well-founded fear of persecution" is the refugee definition (1951 Convention)
        "Refugees must show a well-founded fear of persecution.",
        "Refugees must show a justified fear of persecution.",
        None,
    ),
    ("She has well-founded fears about the plan.", "", "She has justified fears about the plan."),
    (  # "real-world data" is a term of clinical research
        "Researchers use real-world data to study drug safety.",
        "Researchers use real-life data to study drug safety.",
        None,
    ),
    ("Give a real-world example of inertia.", "", "Give a real-life example of inertia."),
    (  # electric current
        "Plot the voltage and current data on one graph.",
        "Plot the voltage and up-to-date data on one graph.",
        None,
    ),
    ("Use the current data on unemployment.", "", "Use the up-to-date data on unemployment."),
    (  # people who eat meat are no carnivores
        "Vegetarians and meat-eaters differ in their cholesterol levels.",
        "Vegetarians and carnivores differ in their cholesterol levels.",
        None,
    ),
    (
        "Are meat-eating people healthier than vegetarians?",
        "Are carnivorous people healthier than vegetarians?",
        None,
    ),
    ("Lions are meat-eaters.", "", "Lions are carnivores."),
    (  # "tax-exempt status" is a legal term
        "The charity has tax-exempt status.",
        "The charity has tax-free status.",
        None,
    ),
    ("Investors buy tax-exempt bonds.", "", "Investors buy tax-free bonds."),
    (  # "hard" + gerund, not the adjective
        "It's hard working and studying at the same time.",
        "It's industrious and studying at the same time.",
        None,
    ),
    ("They are hard working people.", "", "They are industrious people."),
    (  # "know when you're well off" is fortunate, not rich
        "He doesn't know when he's well off.",
        "He doesn't know when he's affluent.",
        None,
    ),
    ("He doesn't know when he's well-off.", "He doesn't know when he's well-to-do.", None),
    ("Well off families pay more tax.", "", "Affluent families pay more tax."),
    (  # "out-of-the-way" of a thing is unusual, not far
        "She has an out-of-the-way taste in music.",
        "She has a remote taste in music.",
        None,
    ),
    ("We stayed in an out-of-the-way village.", "", "We stayed in a remote village."),
    (  # "second" of a ranking, not the second point of an argument
        "Second, third and fourth place went to France.",
        "Secondly, third and fourth place went to France.",
        None,
    ),
    ("Second, the data were noisy.", "", "Secondly, the data were noisy."),
    (
        "Once and for all, the question was settled.",
        "For good, the question was settled.",
        None,
    ),
    ("Let us settle this once and for all.", "", "Let us settle this for good."),
    (  # "naturally" of what occurs in nature
        "Naturally, uranium occurs as a mixture of isotopes.",
        "Of course, uranium occurs as a mixture of isotopes.",
        None,
    ),
    ("Naturally, the landlord raised the rent.", "", "Of course, the landlord raised the rent."),
    (  # the participle of "wind" (a clock)
        "The clock was wound up with a small key.",
        "The clock was ended up with a small key.",
        None,
    ),
    ("The company wound up in court.", "", "The company ended up in court."),
    (  # a court "sets aside" a conviction: annuls it
        "The appeal court set aside the conviction for money laundering.",
        "The appeal court put aside the conviction for money laundering.",
        None,
    ),
    ("She set aside money for her retirement.", "", "She put aside money for her retirement."),
    (  # "work out" is also to exercise
        "People who work out the most have a lower resting heart rate.",
        "People who calculate the most have a lower resting heart rate.",
        None,
    ),
    ("Work out the area of the triangle.", "", "Calculate the area of the triangle."),
    (  # "confidence" alone is confidence in anything (institutions, intervals)
        "Respondents rated their self-confidence and their confidence in the courts.",
        "Respondents rated their confidence and their confidence in the courts.",
        "Respondents rated their self-assurance and their confidence in the courts.",
    ),
    (  # "egocentric" of a child is Piaget's term for a stage of thinking
        "A self-centred child refuses to share.",
        "An egocentric child refuses to share.",
        None,
    ),
    ("A self-centred man ignores others.", "", "An egocentric man ignores others."),
    (  # "activities of daily living" is a clinical term
        "Nurses assess the activities of daily living.",
        "Nurses assess the activities of day-to-day living.",
        None,
    ),
    ("Daily routines vary by culture.", "", "Day-to-day routines vary by culture."),
    ("Is the new rope any longer?", "Is the new rope anymore?", None),  # the comparative
    ("I can't wait any longer.", "", "I can't wait anymore."),
]


MISFIRES = [
    pytest.param(text, bad, good, id=f"{name}-{i}")
    for name, rows in (
        ("pass14", PASS_14),
        ("pass15", PASS_15),
        ("pass16", PASS_16),
        ("general", GENERAL_TEXT),
        ("older", OLDER),
        ("pass17-verbs", PASS_17_VERBS),
        ("pass17-adj-nouns", PASS_17_ADJ_NOUNS),
        ("pass17-adv-hyphen", PASS_17_ADV_HYPHEN),
    )
    for i, (text, bad, good) in enumerate(rows)
]


@pytest.mark.parametrize(("text", "bad", "good"), MISFIRES)
def test_entries_refuse_the_readings_they_would_break(text, bad, good):
    made = _changes(text)
    assert bad not in made, made
    assert good is None or good in made, made


def test_every_row_checks_something():
    rows = [
        *PASS_14,
        *PASS_15,
        *PASS_16,
        *GENERAL_TEXT,
        *OLDER,
        *PASS_17_VERBS,
        *PASS_17_ADJ_NOUNS,
        *PASS_17_ADV_HYPHEN,
    ]
    assert len(rows) >= 150
    assert all(bad or good for _, bad, good in rows)  # a row with neither could not fail
