"""A well-behaved opponent for the zoo: random legal play that never knocks."""
import zoo

zoo.play(lambda out, message: None)
